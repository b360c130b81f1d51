"""Runs a command on a terminal of its own, as a person at it would.

    pty-run.py [STEP...] -- COMMAND [ARG...]

Each STEP in turn, each waiting at most 10 s for what it waits for (and
none once the command has closed the terminal):
  noecho        until the terminal's echo is off (a password prompt)
  text:STRING   until the terminal has shown STRING
  send:BYTES    types BYTES (Python escapes: send:'\\n', send:'\\x03' for ^C)
Then reads what the terminal shows until the command closes it (or
nothing comes for 10 s), and prints the command's exit status
(os.waitstatus_to_exitcode: -N for a signal) on the first line and
everything the terminal showed, as it came (carriage returns too), after it.
"""
import os
import pty
import select
import sys
import termios
import time

WAIT_S = 10

steps = sys.argv[1 : sys.argv.index("--")]
argv = sys.argv[sys.argv.index("--") + 1 :]
pid, fd = pty.fork()
if pid == 0:
    os.execvp(argv[0], argv)
shown = b""
closed = False


def read_some(timeout):
    """One read of what the terminal shows; False once it is closed or silent."""
    global shown, closed
    if closed or not select.select([fd], [], [], timeout)[0]:
        return False
    try:
        data = os.read(fd, 4096)
    except OSError:  # EIO: the command and its children closed the terminal
        data = b""
    shown += data
    closed = not data
    return not closed


def echo_on():
    return bool(termios.tcgetattr(fd)[3] & termios.ECHO)


for step in steps:
    end = time.time() + WAIT_S
    if step == "noecho":
        while not closed and echo_on() and time.time() < end:
            read_some(0.02)
    elif step.startswith("text:"):
        want = step[len("text:") :].encode()
        while not closed and want not in shown and time.time() < end:
            read_some(0.1)
    elif step.startswith("send:"):
        if not closed:  # nothing to type at: the command is gone
            os.write(fd, step[len("send:") :].encode().decode("unicode_escape").encode("latin-1"))
    else:
        sys.exit("pty-run.py: unknown step " + step)
while read_some(WAIT_S):
    pass
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
sys.stdout.write(shown.decode(errors="replace"))
