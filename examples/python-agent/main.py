"""An example agent in the production contract: the prompt arrives on stdin,
the response goes to stdout, diagnostics to stderr. A real agent would call
a model API here (with a key from --env-file) and use tools."""
import json
import os
import platform
import sys


def main() -> int:
    prompt = sys.stdin.read().strip()
    # The workspace is writable scratch space; it vanishes with the sandbox.
    with open("notes.txt", "w", encoding="utf-8") as f:
        f.write(prompt)
    response = {
        "agent": "python-agent",
        "prompt": prompt,
        "characters": len(prompt),
        "answer": prompt.upper(),
        "python": platform.python_version(),
        "cwd": os.getcwd(),
    }
    json.dump(response, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
