#!/usr/bin/env bash
# What the sandbox mirrors of /etc/ssl, and what the caller's groups
# reach. Security round 2, finding 7 (low): with the caller in group
# ssl-cert, /etc/ssl/private (the host's TLS keys) became searchable
# inside, since all of /etc/ssl was mirrored. Now only what TLS clients
# read is: the trusted certificates and OpenSSL's configuration -- and
# Python, OpenSSL, curl, git and Node.js still find them. A root caller's
# supplementary groups are cleared; an unprivileged caller's cannot be (an
# unprivileged user namespace must deny setgroups), which security.md
# says and the last case shows.
. "$(dirname "$0")/../integration/libtest.sh"

GID_X=54322

# sr_with_group GID ARGS...: sr, with GID among the caller's supplementary groups.
sr_with_group() {
	local g=$1 o="$SR_TMP/.out" e="$SR_TMP/.err"
	shift
	if [ "$SR_AS" = user ]; then
		setpriv --reuid="$SR_TEST_USER" --regid="$SR_TEST_USER" --groups="$g" --inh-caps=-all \
			-- env HOME="$SR_TMP/home-user" XDG_CONFIG_HOME="$SR_TMP/xdg-user" "$SR" "$@" \
			</dev/null >"$o" 2>"$e"
	else
		setpriv --groups="$g" -- "$SR" "$@" </dev/null >"$o" 2>"$e"
	fi
	rc=$?
	out=$(cat "$o")
	errout=$(cat "$e")
}

t_ssl_private_hidden() {
	if [ ! -d /etc/ssl/private ]; then
		skip "/etc/ssl/private is not mirrored" "this host has no /etc/ssl/private"
		return
	fi
	sr_with_group "$(stat -c %g /etc/ssl/private)" --net none -- sh -c \
		'test -e /etc/ssl/private && echo present || echo absent; ls /etc/ssl | tr "\n" " "'
	assert_eq "with the caller in /etc/ssl/private's group, it does not exist inside" absent \
		"$(head -1 <<<"$out")"
	assert_no_match "/etc/ssl lists no private" "private" "$(sed -n 2p <<<"$out")"
}

# The clients find the trusted certificates: each loads them, and checks a
# self-signed server certificate against them (and refuses it).
t_tls_clients() {
	local d="$SR_TMP/tls"
	if [ ! -e "$d/cert.pem" ]; then
		mkdir -p "$d"
		openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/key.pem" -out "$d/cert.pem" \
			-days 2 -subj /CN=127.0.0.1 >/dev/null 2>&1
		cat >"$d/server.py" <<-'EOF'
			import socket, ssl, sys
			ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
			ctx.load_cert_chain(sys.argv[1], sys.argv[2])
			s = socket.socket()
			s.bind(("127.0.0.1", 8443))
			s.listen(8)
			print("listening", flush=True)
			while True:
			    c, _ = s.accept()
			    try:
			        t = ctx.wrap_socket(c, server_side=True)
			        t.recv(1024)
			        t.sendall(b"HTTP/1.0 200 OK\r\n\r\nhi")
			        t.close()
			    except OSError:
			        c.close()
		EOF
		chmod -R a+rX "$d"
	fi
	local root_ca=/usr/share/ca-certificates/mozilla/ISRG_Root_X1.crt
	sr --net none --ro-bind "$d" /t -- sh -c '
		python3 /t/server.py /t/cert.pem /t/key.pem >/tmp/server.log 2>&1 &
		for i in $(seq 50); do grep -q listening /tmp/server.log && break; sleep 0.1; done
		python3 -c "import ssl; c = ssl.create_default_context(); c.load_default_certs(); print(\"python CAs\", c.cert_store_stats()[\"x509_ca\"] > 0)"
		python3 -c "
import urllib.request
try:
    urllib.request.urlopen(\"https://127.0.0.1:8443/\")
except Exception as e:
    print(\"python\", \"verify failed: self-signed\" if \"self-signed certificate\" in str(e) else e)"
		if [ -e '"$root_ca"' ]; then openssl verify '"$root_ca"' 2>&1 | sed "s/^.*: /openssl /"; fi
		curl -sS -o /dev/null https://127.0.0.1:8443/ 2>/dev/null; echo "curl exit $?"
		GIT_TRACE_CURL=1 git ls-remote https://127.0.0.1:8443/x 2>&1 | grep -o "found [0-9]* certificates" | sed "s/[0-9][0-9]*/N/; s/^/git /"
		NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt node -e "console.log(\"node loaded\")" 2>&1
		node --use-openssl-ca -e "require(\"https\").get(\"https://127.0.0.1:8443/\").on(\"error\", e => console.log(\"node\", e.code))"
	'
	assert_match "Python loads the system's CAs" "(^|
)python CAs True" "$out"
	assert_match "Python checks a server against them (a self-signed one fails)" \
		"(^|
)python verify failed: self-signed" "$out"
	if [ -e "$root_ca" ]; then
		assert_match "OpenSSL finds a root in the hashed store (/usr/lib/ssl/certs)" "(^|
)openssl OK" "$out"
	else
		skip "OpenSSL finds a root in the hashed store" "no $root_ca on this host"
	fi
	assert_match "curl reads its CA file and rejects the server (60, not 77)" "(^|
)curl exit 60" "$out"
	assert_match "git (GnuTLS) loads the certificates" "(^|
)git found N certificates" "$out"
	assert_match "Node.js reads the bundle (NODE_EXTRA_CA_CERTS), no warning" "^node loaded$" \
		"$(grep '^node loaded\|Warning' <<<"$out")"
	assert_match "Node.js with --use-openssl-ca checks the server" \
		"(^|
)node DEPTH_ZERO_SELF_SIGNED_CERT" "$out"
}

# A host file only a group can read, bound in: a root caller's groups are
# gone; an unprivileged caller's are not (setgroups is denied to an
# unprivileged user namespace), as security.md says.
t_groups() {
	local f="$SR_TMP/group-only-$SR_AS"
	echo "group-secret" >"$f"
	chown "0:$GID_X" "$f"
	chmod 0640 "$f"
	sr_with_group "$GID_X" --net none --ro-bind "$f" /f -- sh -c \
		'cat /f 2>/dev/null || echo unreadable; grep "^Groups:" /proc/self/status'
	if [ "$SR_AS" = root ]; then
		assert_eq "a root caller's supplementary groups: cleared" "unreadable
Groups:" "$(sed 's/[[:space:]]*$//' <<<"$out")"
	else
		assert_match "an unprivileged caller's groups stay in force (documented)" \
			"^group-secret
Groups:.*65534" "$out"
	fi
}

for_each_user t_ssl_private_hidden t_tls_clients t_groups
done_testing
