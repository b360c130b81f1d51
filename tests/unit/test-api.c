/* SPDX-License-Identifier: MIT */
/*
 * The API's pure parts: routing (route.h), what requests carry (body.h),
 * multipart bodies (multipart.h), the byte queue of files and streams
 * (fbuf.h).
 */
#include "body.h"
#include "fbuf.h"
#include "multipart.h"
#include "preview-scan.h"
#include "route.h"
#include "util.h"
#include "testutil.h"

#include <check.h>

static struct sr_route_match route(const char *method, const char *path)
{
	struct sr_route_match m;

	sr_route(method, path, &m);
	return m;
}

START_TEST(test_route_v1)
{
	struct sr_route_match m;

	ck_assert_int_eq(route("GET", "/v1/sandboxes").route, SR_ROUTE_SB_LIST);
	ck_assert_int_eq(route("POST", "/v1/sandboxes").route, SR_ROUTE_SB_CREATE);
	m = route("DELETE", "/v1/sandboxes/0123abcd");
	ck_assert_int_eq(m.route, SR_ROUTE_SB_DELETE);
	ck_assert_str_eq(m.id, "0123abcd");
	ck_assert_int_eq(m.family, SR_API_V1);
	m = route("POST", "/v1/sandboxes/my-box.1/ports/3000");
	ck_assert_int_eq(m.route, SR_ROUTE_SB_PORT);
	ck_assert_str_eq(m.id, "my-box.1");
	ck_assert_int_eq(m.port, 3000);
	ck_assert_int_eq(route("PUT", "/v1/sandboxes/a/files").route, SR_ROUTE_SB_FILES_PUT);
	ck_assert_int_eq(route("DELETE", "/v1/snapshots/deps").route, SR_ROUTE_SNAP_DELETE);
	/* A port is 1-65535, written plainly. */
	ck_assert_int_eq(route("POST", "/v1/sandboxes/a/ports/0").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("POST", "/v1/sandboxes/a/ports/65536").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("POST", "/v1/sandboxes/a/ports/080").route, SR_ROUTE_NONE);
	/* A ref is one segment of the name characters, not . or .., at most 64. */
	ck_assert_int_eq(route("GET", "/v1/sandboxes/..").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/a b").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/a//exec").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET",
			       "/v1/sandboxes/"
			       "0123456789012345678901234567890123456789012345678901234567890123")
			     .route,
			 SR_ROUTE_SB_GET);
	ck_assert_int_eq(route("GET",
			       "/v1/sandboxes/"
			       "01234567890123456789012345678901234567890123456789012345678901234")
			     .route,
			 SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "/v1/sandboxes/").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "/v1/nothing").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "/v1/nothing").family, SR_API_V1);
	ck_assert_int_eq(route("POST", "/v1/deployments/x/invoke").route, SR_ROUTE_INVOKE);
	ck_assert_str_eq(route("POST", "/v1/deployments/my-agent.v2/invoke").id, "my-agent.v2");
	ck_assert_int_eq(route("POST", "/v1/deployments/../invoke").route, SR_ROUTE_UNSUPPORTED);
	ck_assert_int_eq(route("POST", "/v1/deployments/x/rollback").route, SR_ROUTE_UNSUPPORTED);
}
END_TEST

START_TEST(test_route_methods)
{
	struct sr_route_match m = route("PATCH", "/v1/sandboxes/abcd");

	ck_assert_int_eq(m.route, SR_ROUTE_BAD_METHOD);
	ck_assert_str_eq(m.allow, "GET, DELETE");
	m = route("POST", "/v1/sandboxes/abcd/files");
	ck_assert_int_eq(m.route, SR_ROUTE_BAD_METHOD);
	ck_assert_str_eq(m.allow, "GET, PUT, DELETE");
	m = route("DELETE", "/v1/sandboxes");
	ck_assert_str_eq(m.allow, "GET, POST");
}
END_TEST

START_TEST(test_route_e2b)
{
	struct sr_route_match m;

	ck_assert_int_eq(route("POST", "/v2/sandboxes").route, SR_ROUTE_E2B_CREATE);
	ck_assert_int_eq(route("GET", "/v2/sandboxes").route, SR_ROUTE_E2B_LIST);
	m = route("DELETE", "/sandboxes/abcd1234");
	ck_assert_int_eq(m.route, SR_ROUTE_E2B_KILL);
	ck_assert_int_eq(m.family, SR_API_E2B);
	ck_assert_int_eq(route("POST", "/sandboxes/abcd/timeout").route, SR_ROUTE_E2B_TIMEOUT);
	ck_assert_int_eq(route("POST", "/v2/sandboxes/abcd/connect").route, SR_ROUTE_E2B_CONNECT);
	/* What E2B has and serve does not: not supported, in E2B's format. */
	m = route("POST", "/sandboxes/abcd/pause");
	ck_assert_int_eq(m.route, SR_ROUTE_UNSUPPORTED);
	ck_assert_int_eq(m.family, SR_API_E2B);
	ck_assert_int_eq(route("POST", "/v3/templates").route, SR_ROUTE_UNSUPPORTED);
	ck_assert_int_eq(route("GET", "/volumes").route, SR_ROUTE_UNSUPPORTED);
	ck_assert_int_eq(route("GET", "/nothing").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "/volumes/x").route, SR_ROUTE_UNSUPPORTED);
}
END_TEST

START_TEST(test_route_envd)
{
	struct sr_route_match m = route("POST", "/process.Process/Start");

	ck_assert_int_eq(m.route, SR_ROUTE_ENVD_RPC);
	ck_assert_int_eq(m.family, SR_API_ENVD);
	ck_assert_str_eq(m.name, "process.Process/Start");
	m = route("POST", "/filesystem.Filesystem/ListDir");
	ck_assert_str_eq(m.name, "filesystem.Filesystem/ListDir");
	ck_assert_int_eq(route("POST", "/process.Process/Start/x").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("POST", "/process.Process/St4rt").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "/files").route, SR_ROUTE_ENVD_FILES_GET);
	ck_assert_int_eq(route("POST", "/files").route, SR_ROUTE_ENVD_FILES_POST);
	ck_assert_int_eq(route("GET", "/health").route, SR_ROUTE_ENVD_HEALTH);
	ck_assert_int_eq(route("GET", "*").route, SR_ROUTE_NONE);
	ck_assert_int_eq(route("GET", "").route, SR_ROUTE_NONE);
}
END_TEST

static json_t *parse(const char *text)
{
	json_t *j = NULL;

	ck_assert_int_eq(sr_json_parse(text, strlen(text), 0, SR_API_JSON_DEPTH, &j), 0);
	return j;
}

/* argv joined with spaces, for comparing. */
static const char *joined(const struct sr_strv *v)
{
	static char buf[1024];
	size_t n = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < v->n; i++)
		n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", v->items[i]);
	return buf;
}

START_TEST(test_create)
{
	struct sr_api_create c;
	struct sr_error err = {0};
	json_t *j;

	j = parse(
	    "{\"profile\":\"tx\",\"memory\":\"512M\",\"cpus\":0.5,\"pids\":64,\"disk\":1048576,"
	    "\"timeout\":90,\"net\":\"none\",\"allow\":[\"1.1.1.1\"],\"env\":{\"A\":\"b=c\"},"
	    "\"strict\":true,\"ro_bind\":[[\"/srv\",\"/data\"]],\"agent\":\"./my-agent\"}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), 0);
	ck_assert_str_eq(joined(&c.argv),
			 "create --profile tx --memory 512M --cpus 0.5 --pids 64 --disk 1048576B "
			 "--timeout 90s --net none --allow 1.1.1.1 --env A=b=c --strict --ro-bind "
			 "/srv /data ./my-agent");
	ck_assert_str_eq(c.profile, "tx");
	ck_assert(c.has_timeout);
	ck_assert_int_eq(c.timeout_ms, 90000);
	ck_assert(!c.poolable);
	sr_api_create_free(&c);
	json_decref(j);

	/* A profile and a timeout alone: a warm sandbox will do. */
	j = parse("{\"profile\":\"offline\",\"timeout\":\"5m\"}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), 0);
	ck_assert(c.poolable);
	ck_assert_int_eq(c.timeout_ms, 300000);
	sr_api_create_free(&c);
	json_decref(j);

	/* Refused: an unknown key, a wrong type, an agent that looks like an option. */
	j = parse("{\"memroy\":\"1G\"}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "unknown key \"memroy\""));
	/* It lists what create takes: every key, net_helper included. */
	ck_assert_ptr_nonnull(strstr(err.msg, "net_helper"));
	ck_assert_ptr_nonnull(strstr(err.msg, "ro_bind, bind, agent)"));
	json_decref(j);
	j = parse("{\"env\":[\"A=b\"]}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	json_decref(j);
	/* A name with '=' (or none) would be another variable: A=B's "C" was A, "B=C". */
	j = parse("{\"env\":{\"A=B\":\"C\"}}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "\"env\": \"A=B\" is not a variable's name (empty, or with '=')");
	json_decref(j);
	j = parse("{\"env\":{\"\":\"C\"}}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	json_decref(j);
	/* A name --env refuses: said where it is read, of the key, as E2B's envVars. */
	j = parse("{\"env\":{\"A B\":\"C\"}}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	ck_assert_str_eq(err.msg, "env: bad variable name 'A B' (use letters, digits and '_', not "
				  "starting with a digit)");
	json_decref(j);
	j = parse("{\"agent\":\"--bind\"}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	json_decref(j);
	j = parse("{\"disk\":1.5}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	json_decref(j);
	j = parse("{\"timeout\":-1}");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	json_decref(j);
	j = parse("[]");
	ck_assert_int_eq(sr_api_parse_create(j, &c, &err), -EINVAL);
	json_decref(j);
}
END_TEST

START_TEST(test_create_e2b)
{
	struct sr_api_create c;
	struct sr_error err = {0};
	json_t *j;

	j = parse("{\"templateID\":\"base\",\"timeout\":300,\"metadata\":{\"k\":\"v\"},"
		  "\"secure\":true,\"network\":{}}");
	ck_assert_int_eq(sr_api_parse_e2b_create(j, "e2b", &c, &err), 0);
	/* The deadline in argv too: a cold create ignored it (the profile's 300 s). */
	ck_assert_str_eq(joined(&c.argv), "create --profile e2b --timeout 300s");
	ck_assert(c.poolable);
	ck_assert_int_eq(c.timeout_ms, 300000);
	ck_assert_str_eq(json_string_value(json_object_get(c.metadata, "k")), "v");
	sr_api_create_free(&c);
	json_decref(j);

	/* 0 is not "none" there: the profile's. */
	j = parse("{\"templateID\":\"base\",\"timeout\":0}");
	ck_assert_int_eq(sr_api_parse_e2b_create(j, "e2b", &c, &err), 0);
	ck_assert_str_eq(joined(&c.argv), "create --profile e2b");
	ck_assert(!c.has_timeout);
	sr_api_create_free(&c);
	json_decref(j);

	j = parse(
	    "{\"templateID\":\"tx\",\"envVars\":{\"A\":\"1\"},\"allow_internet_access\":false}");
	ck_assert_int_eq(sr_api_parse_e2b_create(j, "e2b", &c, &err), 0);
	ck_assert_str_eq(joined(&c.argv), "create --profile tx --net none --env A=1");
	ck_assert(!c.poolable);
	sr_api_create_free(&c);
	json_decref(j);

	j = parse("{\"mcp\":{\"x\":{}}}");
	ck_assert_int_eq(sr_api_parse_e2b_create(j, "e2b", &c, &err), -ENOTSUP);
	json_decref(j);
}
END_TEST

/* E2B's create refused at r, its message msg (NULL: any). */
static void e2b_refused(const char *body, int r, const char *msg)
{
	struct sr_api_create c;
	struct sr_error err = {0};
	json_t *j = parse(body);

	ck_assert_int_eq(sr_api_parse_e2b_create(j, "e2b", &c, &err), r);
	if (msg)
		ck_assert_str_eq(err.msg, msg);
	json_decref(j);
}

/*
 * A bad value is said of its field and value where the body is read, not
 * as create's option afterwards; and a value of the wrong type is
 * refused, never taken for nothing ("envVars": "x" set no variable, a
 * string "false" left the network on).
 */
START_TEST(test_create_e2b_values)
{
	struct sr_api_create c;
	struct sr_error err = {0};
	json_t *j;

	e2b_refused("{\"envVars\":{\"A B\":\"1\"}}", -EINVAL,
		    "envVars: bad variable name 'A B' (use letters, digits and '_', not starting "
		    "with a digit)");
	e2b_refused("{\"envVars\":{\"file\":\"1\"}}", -EINVAL,
		    "envVars: variable name 'file' is reserved: [env] file is a setting");
	e2b_refused("{\"envVars\":{\"A=B\":\"1\"}}", -EINVAL,
		    "\"envVars\": \"A=B\" is not a variable's name (empty, or with '=')");
	e2b_refused("{\"envVars\":{\"A\":1}}", -EINVAL, "\"envVars\": \"A\" is not a string");
	e2b_refused("{\"envVars\":\"x\"}", -EINVAL,
		    "\"envVars\": expected an object of strings, {\"KEY\": \"VALUE\"}");
	e2b_refused("{\"envVars\":[1]}", -EINVAL, NULL);
	e2b_refused("{\"allow_internet_access\":\"false\"}", -EINVAL,
		    "allow_internet_access: 'false' is not true or false");
	e2b_refused("{\"allow_internet_access\":0}", -EINVAL, NULL);
	/* The SDK's option's name, which it sends as allow_internet_access. */
	e2b_refused("{\"allowInternetAccess\":false}", -EINVAL, NULL);
	e2b_refused("{\"autoPause\":\"true\"}", -EINVAL, "autoPause: 'true' is not true or false");
	e2b_refused("{\"templateID\":\"../x\"}", -EINVAL,
		    "templateID: '../x' is not a template (a profile's name: letters, digits, "
		    "'-', '_' and '.'; base for the server's)");
	e2b_refused("{\"templateID\":\"/etc/x.ini\"}", -EINVAL, NULL);
	e2b_refused("{\"templateID\":\"a..b\"}", -EINVAL, NULL);
	e2b_refused("{\"templateID\":\"\"}", -EINVAL, NULL);
	e2b_refused("{\"templateID\":7}", -EINVAL, NULL);
	/* A profile's name only: not the built-in copy past an operator's file, nor '.x'. */
	e2b_refused("{\"templateID\":\"builtin:e2b\"}", -EINVAL,
		    "templateID: 'builtin:e2b' is not a template (a profile's name: letters, "
		    "digits, '-', '_' and '.'; base for the server's)");
	e2b_refused("{\"templateID\":\".hidden\"}", -EINVAL, NULL);
	e2b_refused("{\"templateID\":\"a b\"}", -EINVAL, NULL);
	e2b_refused("{\"templateID\":\"x.\"}", -EINVAL, NULL);
	/* A file's name, as -p refuses it: not a path to take, nor foo.ini.ini to look for. */
	e2b_refused("{\"templateID\":\"foo.ini\"}", -EINVAL,
		    "templateID: 'foo.ini' is not a template (a profile's name: letters, "
		    "digits, '-', '_' and '.'; base for the server's)");
	e2b_refused("{\"timeout\":31622401}", -EINVAL,
		    "timeout: 31622401 is more than 366 days (31622400 seconds), the longest a "
		    "living sandbox lives");
	e2b_refused("{\"timeout\":\"300\"}", -EINVAL,
		    "timeout: '300' is not a number of seconds (a whole number, 0 to 31622400)");
	e2b_refused("{\"timeout\":-1}", -EINVAL, NULL);
	e2b_refused("{\"timeout\":1.5}", -EINVAL, NULL);
	e2b_refused("{\"metadata\":\"x\"}", -EINVAL, "metadata: 'x' is not an object of strings");
	e2b_refused("{\"metadata\":{\"k\":1}}", -EINVAL, NULL);

	/* Up to the longest; an empty envVars, a null, as none given. */
	j = parse("{\"templateID\":\"my-profile.2\",\"timeout\":31622400,\"envVars\":{},"
		  "\"allow_internet_access\":null,\"metadata\":null}");
	ck_assert_int_eq(sr_api_parse_e2b_create(j, "e2b", &c, &err), 0);
	ck_assert_str_eq(joined(&c.argv), "create --profile my-profile.2 --timeout 31622400s");
	ck_assert(c.poolable);
	sr_api_create_free(&c);
	json_decref(j);
	j = parse("{\"allow_internet_access\":true}");
	ck_assert_int_eq(sr_api_parse_e2b_create(j, "e2b", &c, &err), 0);
	ck_assert_str_eq(joined(&c.argv), "create --profile e2b");
	sr_api_create_free(&c);
	json_decref(j);
}
END_TEST

/* A duration that is not 0 never comes out as 0 ms, which says "none". */
START_TEST(test_duration)
{
	uint64_t ms = 7;
	json_t *j;

	j = json_real(0.0004);
	ck_assert_int_eq(sr_api_duration(j, &ms), -ERANGE);
	ck_assert_int_eq(ms, 7);
	json_decref(j);
	j = json_real(0.001);
	ck_assert_int_eq(sr_api_duration(j, &ms), 0);
	ck_assert_int_eq(ms, 1);
	json_decref(j);
	j = json_integer(0);
	ck_assert_int_eq(sr_api_duration(j, &ms), 0);
	ck_assert_int_eq(ms, 0);
	json_decref(j);
}
END_TEST

START_TEST(test_exec)
{
	struct sr_api_exec x;
	struct sr_error err = {0};
	json_t *j;

	j = parse("{\"cmd\":\"echo hi\",\"env\":{\"A\":\"1\"},\"cwd\":\"/tmp\",\"stdin\":\"in\","
		  "\"timeout\":\"2s\",\"stream\":true}");
	ck_assert_int_eq(sr_api_parse_exec(j, &x, &err), 0);
	ck_assert_str_eq(json_string_value(json_array_get(x.argv, 0)), "/bin/sh");
	ck_assert_str_eq(json_string_value(json_array_get(x.argv, 2)), "echo hi");
	ck_assert_str_eq(json_string_value(json_array_get(x.env, 0)), "A=1");
	ck_assert_str_eq(x.cwd, "/tmp");
	ck_assert(x.has_input);
	ck_assert_int_eq(x.input_len, 2);
	ck_assert_int_eq(x.timeout_ms, 2000);
	ck_assert(x.stream && !x.base64);
	sr_api_exec_free(&x);
	json_decref(j);

	j = parse("{\"argv\":[\"cat\"],\"stdin_base64\":\"AAEC\",\"output\":\"base64\"}");
	ck_assert_int_eq(sr_api_parse_exec(j, &x, &err), 0);
	ck_assert_int_eq(x.input_len, 3);
	ck_assert_int_eq(x.input[2], 2);
	ck_assert(x.base64);
	sr_api_exec_free(&x);
	json_decref(j);

	static const char *const bad[] = {
	    "{}",
	    "{\"argv\":[\"a\"],\"cmd\":\"b\"}",
	    "{\"argv\":[]}",
	    "{\"argv\":[\"\"]}",
	    "{\"argv\":[1]}",
	    "{\"argv\":[\"a\"],\"env\":{\"A=B\":\"c\"}}",
	    "{\"argv\":[\"a\"],\"stdin\":\"x\",\"stdin_base64\":\"eA==\"}",
	    "{\"argv\":[\"a\"],\"stdin_base64\":\"!!\"}",
	    "{\"argv\":[\"a\"],\"timeout\":\"soon\"}",
	    "{\"argv\":[\"a\"],\"output\":\"hex\"}",
	    "{\"argv\":[\"a\"],\"tty\":true}",
	};
	for (size_t i = 0; i < SR_ARRAY_SIZE(bad); i++) {
		j = parse(bad[i]);
		ck_assert_msg(sr_api_parse_exec(j, &x, &err) == -EINVAL, "%s", bad[i]);
		json_decref(j);
	}
}
END_TEST

START_TEST(test_envd_start)
{
	struct sr_api_exec x;
	struct sr_error err = {0};
	json_t *j;

	j = parse("{\"process\":{\"cmd\":\"/bin/bash\",\"args\":[\"-l\",\"-c\",\"ls\"],"
		  "\"envs\":{\"K\":\"V\"},\"cwd\":\"src\"},\"stdin\":false}");
	ck_assert_int_eq(sr_api_parse_envd_start(j, "/home/user", &x, &err), 0);
	ck_assert_int_eq(json_array_size(x.argv), 4);
	ck_assert_str_eq(json_string_value(json_array_get(x.argv, 3)), "ls");
	ck_assert_str_eq(x.cwd, "/home/user/src");
	ck_assert(x.stream && x.base64);
	sr_api_exec_free(&x);
	json_decref(j);

	j = parse("{\"process\":{\"cmd\":\"ls\"}}");
	ck_assert_int_eq(sr_api_parse_envd_start(j, "/home/user", &x, &err), 0);
	ck_assert_str_eq(x.cwd, "/home/user");
	sr_api_exec_free(&x);
	json_decref(j);

	j = parse("{\"process\":{\"cmd\":\"ls\"},\"pty\":{\"size\":{\"rows\":1}}}");
	ck_assert_int_eq(sr_api_parse_envd_start(j, "/home/user", &x, &err), -ENOTSUP);
	json_decref(j);
	j = parse("{\"process\":{}}");
	ck_assert_int_eq(sr_api_parse_envd_start(j, "/home/user", &x, &err), -EINVAL);
	json_decref(j);
}
END_TEST

START_TEST(test_base64)
{
	unsigned char out[16];
	char enc[sr_base64_len(5)];
	size_t n;

	ck_assert_int_eq(sr_base64_encode("hello", 5, enc), 8);
	ck_assert_str_eq(enc, "aGVsbG8=");
	ck_assert_int_eq(sr_base64_decode(enc, 8, out, &n), 0);
	ck_assert_int_eq(n, 5);
	ck_assert(memcmp(out, "hello", 5) == 0);
	ck_assert_int_eq(sr_base64_decode("aGVsbG8", 7, out, &n), 0);
	ck_assert_int_eq(n, 5);
	ck_assert_int_eq(sr_base64_encode("", 0, enc), 0);
	ck_assert_int_eq(sr_base64_decode("a", 1, out, &n), -EINVAL);
	ck_assert_int_eq(sr_base64_decode("a\nb=", 4, out, &n), -EINVAL);
}
END_TEST

START_TEST(test_connect)
{
	const char *msg;
	size_t n;
	unsigned char hdr[5];

	ck_assert_int_eq(sr_connect_unwrap("\0\0\0\0\2{}", 7, &msg, &n), 0);
	ck_assert_int_eq(n, 2);
	ck_assert(memcmp(msg, "{}", 2) == 0);
	ck_assert_int_eq(sr_connect_unwrap("\0\0\0\0\3{}", 7, &msg, &n), -EINVAL);
	ck_assert_int_eq(sr_connect_unwrap("\1\0\0\0\2{}", 7, &msg, &n), -EINVAL);
	ck_assert_int_eq(sr_connect_unwrap("\0\0\0", 3, &msg, &n), -EINVAL);
	sr_connect_header(SR_CONNECT_END_STREAM, 0x010203, hdr);
	ck_assert(memcmp(hdr, "\2\0\1\2\3", 5) == 0);
}
END_TEST

START_TEST(test_preview_host)
{
	char ref[65];
	int port;

	ck_assert(sr_api_preview_host("3000-abcd1234.localhost:8049", &port, ref));
	ck_assert_int_eq(port, 3000);
	ck_assert_str_eq(ref, "abcd1234");
	ck_assert(!sr_api_preview_host("127.0.0.1:8049", &port, ref));
	ck_assert(!sr_api_preview_host("localhost:8049", &port, ref));
	ck_assert(!sr_api_preview_host("0-abcd.localhost", &port, ref));
	ck_assert(!sr_api_preview_host("70000-abcd.localhost", &port, ref));
	ck_assert(!sr_api_preview_host("3000-.localhost", &port, ref));
	ck_assert(!sr_api_preview_host("3000-abcd", &port, ref));
}
END_TEST

#define SCAN_TOKEN "0123456789abcdef0123456789abcdef"

/*
 * What a preview's client sends, fed in pieces of n bytes as the relay
 * does (what the scan holds back in front of the next): whether all of it
 * may go in; what went in, into sent.
 */
static bool scan_pieces(const char *text, size_t n, char sent[4096])
{
	struct sr_preview_scan sc;
	size_t len = strlen(text), held = 0, out = 0;
	char buf[4096];
	bool ok = true;

	sr_api_preview_scan_init(&sc, "8000-abcd.localhost:8049", SCAN_TOKEN);
	for (size_t i = 0; i < len && ok; i += n) {
		size_t m = len - i < n ? len - i : n;
		ssize_t go;

		memcpy(buf + held, text + i, m);
		go = sr_api_preview_scan(&sc, buf, held + m);
		ok = go >= 0;
		if (ok) {
			memcpy(sent + out, buf, (size_t)go);
			out += (size_t)go;
			held = held + m - (size_t)go;
			memmove(buf, buf + go, held);
		}
	}
	sent[out] = '\0';
	return ok;
}

START_TEST(test_preview_scan)
{
	static const char *const ok[] = {
	    "GET / HTTP/1.1\r\nHost: 8000-abcd.localhost:8049\r\n\r\n"
	    "GET /b HTTP/1.1\r\nhost:8000-ABCD.localhost:8049 \r\nAccept: */*\r\n\r\n",
	    "POST / HTTP/1.1\r\nHost: 8000-abcd.localhost:8049\r\nContent-Length: 11\r\n\r\n"
	    "hostile: no",
	    "HEAD / HTTP/1.1\nHost: 8000-abcd.localhost:8049\n\n",
	    "POST / HTTP/1.1\r\n\r\n0123456789abcdef0123XYZ",
	};
	static const char *const refused[] = {
	    /* The next request, for the API, on the same connection. */
	    "GET / HTTP/1.1\r\nHost: 8000-abcd.localhost:8049\r\n\r\n"
	    "GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1:8049\r\n\r\n",
	    /* Another sandbox's preview. */
	    "GET / HTTP/1.1\r\nHost: 8000-abcd.localhost:8049\r\n\r\n"
	    "GET / HTTP/1.1\r\nHost: 8000-abce.localhost:8049\r\n\r\n",
	    /* The token, however it is sent. */
	    "GET / HTTP/1.1\r\nHost: 8000-abcd.localhost:8049\r\n"
	    "Authorization: Bearer 0123456789abcdef0123456789abcdef\r\n\r\n",
	    "GET /?k=0123456789abcdef0123456789abcdef HTTP/1.1\r\n",
	    /* A Host too long to be the preview's. */
	    "GET / HTTP/1.1\r\nHost: 8000-abcd.localhost:8049xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\r\n",
	};

	char sent[4096];

	/* Whole, and cut into every size of read: a Host line or the token split by them too. */
	for (size_t n = 1; n <= 80; n++) {
		for (size_t i = 0; i < SR_ARRAY_SIZE(ok); i++) {
			ck_assert_msg(scan_pieces(ok[i], n, sent), "%s, by %zu", ok[i], n);
			ck_assert_str_eq(sent, ok[i]);
		}
		for (size_t i = 0; i < SR_ARRAY_SIZE(refused); i++)
			ck_assert_msg(!scan_pieces(refused[i], n, sent), "%s, by %zu", refused[i],
				      n);
	}
	/* The start of the token at a read's end waits: none of it goes, or too little. */
	ck_assert(scan_pieces("x: 0123456789abcdef0123", 4096, sent));
	ck_assert_str_eq(sent, "x: ");
	ck_assert(scan_pieces("x: 0123456", 4096, sent));
	ck_assert_str_eq(sent, "x: 0123456");
}
END_TEST

static int sniff(const char *head, size_t len, char *host)
{
	return sr_api_sniff_host(head, len, host, 64);
}
#define SNIFF(lit, host) sniff(lit, sizeof(lit) - 1, host)

START_TEST(test_sniff_host)
{
	char host[64];

	ck_assert_int_eq(SNIFF("GET / HTTP/1.1\r\nHost: a.b:1\r\n\r\n", host), 1);
	ck_assert_str_eq(host, "a.b:1");
	/* Found before the head is whole; not yet; a whole head without one; not HTTP/1. */
	ck_assert_int_eq(SNIFF("GET / HTTP/1.1\r\nhost:\tx \r\nA", host), 1);
	ck_assert_str_eq(host, "x");
	ck_assert_int_eq(SNIFF("GET / HTTP/1.1\r\nAccept: */*", host), 0);
	ck_assert_int_eq(SNIFF("GET / HTTP/1.1", host), 0);
	ck_assert_int_eq(SNIFF("GET / HTTP/1.1\r\n\r\n", host), -1);
	ck_assert_int_eq(SNIFF("PRI * HTTP/2.0\r\n", host), -1);
	ck_assert_int_eq(SNIFF("\x16\x03\x01\x02\x00\n", host), -1);
}
END_TEST

START_TEST(test_utf8_whole)
{
	ck_assert_int_eq(sr_utf8_whole("abc", 3), 3);
	ck_assert_int_eq(sr_utf8_whole("a\xc3", 2), 1);
	ck_assert_int_eq(sr_utf8_whole("a\xc3\xa9", 3), 3);
	ck_assert_int_eq(sr_utf8_whole("\xe2\x82", 2), 0);
	ck_assert_int_eq(sr_utf8_whole("\xf0\x9f\x98\x80", 4), 4);
	ck_assert_int_eq(sr_utf8_whole("\xf0\x9f\x98", 3), 0);
	/* Not UTF-8 at all: left for the sanitizer, not held back. */
	ck_assert_int_eq(sr_utf8_whole("\x80\x80\x80\x80\x80", 5), 5);
	ck_assert_int_eq(sr_utf8_whole("", 0), 0);
}
END_TEST

/* What a multipart body gave: "[name|filename]bytes" for each part, in order. */
struct parts {
	char text[4096];
	size_t len;
};

static void parts_begin(void *ctx, const char *name, const char *filename)
{
	struct parts *p = ctx;

	p->len += (size_t)snprintf(p->text + p->len, sizeof(p->text) - p->len, "[%s|%s]",
				   name ? name : "-", filename ? filename : "-");
}

static void parts_data(void *ctx, const char *data, size_t n)
{
	struct parts *p = ctx;

	ck_assert_uint_lt(p->len + n, sizeof(p->text));
	memcpy(p->text + p->len, data, n);
	p->len += n;
	p->text[p->len] = '\0';
}

static const struct sr_multipart_ops parts_ops = {.begin = parts_begin, .data = parts_data};

/* body fed step bytes at a time (0: whole): the parts, or "error N" for the first failure. */
static const char *form(const char *type, const char *body, size_t len, size_t step)
{
	static struct parts p;
	struct sr_multipart m;
	int r;

	p = (struct parts){0};
	r = sr_multipart_init(&m, type, &parts_ops, &p);
	for (size_t off = 0; r == 0 && off < len; off += step ? step : len)
		r = sr_multipart_feed(&m, body + off, step && len - off > step ? step : len - off);
	if (r == 0)
		r = sr_multipart_end(&m);
	sr_multipart_free(&m);
	if (r < 0)
		snprintf(p.text, sizeof(p.text), "error %d", -r);
	return p.text;
}

#define FORM(type, body, step) form(type, body, sizeof(body) - 1, step)
#define LONG_100                                                                                   \
	"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" \
	"xx"                                                                                       \
	"xxxxxxxxxx"
#define LONG_600 LONG_100 LONG_100 LONG_100 LONG_100 LONG_100 LONG_100

START_TEST(test_multipart)
{
	static const char two[] =
	    "preamble\r\n--b-1\r\n"
	    "Content-Disposition: form-data; name=\"file\"; filename=\"up/a.txt\"\r\n"
	    "Content-Type: application/octet-stream\r\n\r\n"
	    "one\r\n--b-\r\n--b\r\r\n-"
	    "\r\n--b-1\r\ncontent-disposition: form-data;name=file;filename=\"x;y\" \r\n\r\n"
	    "\r\n--b-1--\r\nepilogue";
	static const char *const want = "[file|up/a.txt]one\r\n--b-\r\n--b\r\r\n-[file|x;y]";
	const char *type = "multipart/form-data; boundary=b-1";

	/* Whole, a byte at a time, and every size between: a boundary cut anywhere. */
	for (size_t step = 0; step < sizeof(two); step++)
		ck_assert_str_eq(FORM(type, two, step), want);
	ck_assert_str_eq(FORM("Multipart/Form-Data ; charset=x; boundary=\"b-1\"", two, 0), want);
	/* At once, no preamble; a part without headers; data that ends in what begins a boundary.
	 */
	ck_assert_str_eq(FORM(type, "--b-1\r\n\r\nab\r\n--b-\r\n--b-1--", 1), "[-|-]ab\r\n--b-");
	ck_assert_str_eq(FORM(type, "--b-1--", 0), "");
	/* Not a form: the body is the file. A form without a boundary, or a bad one: refused. */
	ck_assert_int_eq(sr_multipart_init(&(struct sr_multipart){0}, "application/octet-stream",
					   &parts_ops, NULL),
			 -ENOMSG);
	ck_assert_int_eq(sr_multipart_init(&(struct sr_multipart){0}, NULL, &parts_ops, NULL),
			 -ENOMSG);
	ck_assert_int_eq(sr_multipart_init(&(struct sr_multipart){0},
					   "multipart/form-datax; boundary=b", &parts_ops, NULL),
			 -ENOMSG);
	ck_assert_str_eq(form("multipart/form-data", "", 0, 0), "error 22");
	ck_assert_str_eq(form("multipart/form-data; boundary=\"a\rb\"", "", 0, 0), "error 22");
	ck_assert_str_eq(form("multipart/form-data; boundary=", "", 0, 0), "error 22");
	ck_assert_str_eq(form("multipart/form-data; boundary=b; x=\"" LONG_600 "\"", "", 0, 0),
			 "error 22");
	/* Cut off, or not the form it says. */
	ck_assert_str_eq(FORM(type, "--b-1\r\n\r\nab", 0), "error 74");
	ck_assert_str_eq(FORM(type, "", 0), "error 74");
	ck_assert_str_eq(FORM(type, "--b-1x\r\n\r\nab\r\n--b-1--", 0), "error 74");
	ck_assert_str_eq(FORM(type, "--b-1\r\nA: \0b\r\n\r\nc\r\n--b-1--", 0), "[-|-]c");
}
END_TEST

/*
 * A queue that never runs empty -- a client reading steadily, a little
 * slower than the sandbox writes -- keeps a block the size of what is
 * queued: it grew with every byte that went through it (a 1 GiB
 * download took the server's RSS to ~1 GB), since its taken bytes made
 * room only once it was empty.
 */
/* out[0..n) is the pattern in[] repeated, from its byte at offset at. */
static bool same_bytes(const char *out, size_t n, const char *in, size_t in_len, size_t at)
{
	for (size_t i = 0; i < n; i++)
		if (out[i] != in[(at + i) % in_len])
			return false;
	return true;
}

START_TEST(test_fbuf_bounded)
{
	static char in[65536], out[65536];
	struct fbuf b = {0};
	size_t taken = 0;

	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7);
	/* 64 MiB through it, 64 KiB in and 48 KiB out at a time, the rest left queued each round.
	 */
	for (int round = 0; round < 1024; round++) {
		ck_assert_int_eq(fbuf_add(&b, in, sizeof(in)), 0);
		while (fbuf_queued(&b) > 4 * sizeof(in)) {
			size_t n = fbuf_take(&b, out, 49152);

			ck_assert(same_bytes(out, n, in, sizeof(in), taken));
			taken += n;
		}
		ck_assert_uint_le(fbuf_queued(&b), 5 * sizeof(in));
		ck_assert_uint_le(b.cap, 16 * sizeof(in));
	}
	while (fbuf_queued(&b)) {
		size_t n = fbuf_take(&b, out, sizeof(out));

		ck_assert(same_bytes(out, n, in, sizeof(in), taken));
		taken += n;
	}
	ck_assert_uint_eq(taken, 1024 * sizeof(in));
	fbuf_free(&b);
}
END_TEST

START_TEST(test_multipart_head_max)
{
	static char body[SR_MULTIPART_HEAD_MAX + 64];
	size_t n = (size_t)snprintf(body, sizeof(body), "--b\r\nX: ");

	memset(body + n, 'x', SR_MULTIPART_HEAD_MAX);
	memcpy(body + n + SR_MULTIPART_HEAD_MAX, "\r\n\r\n--b--", 9);
	ck_assert_str_eq(
	    form("multipart/form-data; boundary=b", body, n + SR_MULTIPART_HEAD_MAX + 9, 100),
	    "error 74");
}
END_TEST

static Suite *api_suite(void)
{
	Suite *s = suite_create("api");
	TCase *tc = tcase_create("api");

	tcase_add_test(tc, test_route_v1);
	tcase_add_test(tc, test_route_methods);
	tcase_add_test(tc, test_route_e2b);
	tcase_add_test(tc, test_route_envd);
	tcase_add_test(tc, test_create);
	tcase_add_test(tc, test_create_e2b);
	tcase_add_test(tc, test_create_e2b_values);
	tcase_add_test(tc, test_duration);
	tcase_add_test(tc, test_exec);
	tcase_add_test(tc, test_envd_start);
	tcase_add_test(tc, test_base64);
	tcase_add_test(tc, test_connect);
	tcase_add_test(tc, test_preview_host);
	tcase_add_test(tc, test_preview_scan);
	tcase_add_test(tc, test_sniff_host);
	tcase_add_test(tc, test_utf8_whole);
	tcase_add_test(tc, test_multipart);
	tcase_add_test(tc, test_multipart_head_max);
	tcase_add_test(tc, test_fbuf_bounded);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return sr_test_run(api_suite());
}
