#!/usr/bin/env bash
# The server against its OpenAPI contract: starts `sieve serve` on a scratch store (with a
# bearer token, a backup directory and a small memory budget) and runs the API fuzzer
# schemathesis (python/requirements-test.txt) against it, with the document the server itself
# serves at GET /openapi.json (checked equal to tools/server/openapi.json). Every operation is tested in every phase (the schema's
# examples, its boundary and negative "coverage" cases, random fuzzing, and stateful sequences
# that follow the document's links), with these checks on every answer: no 5xx, a status, a
# content type, headers and a body the document lists for the operation, schema-violating
# requests refused with a 4xx, a 405 with an Allow header for an undocumented method, and
# resources usable after they are deleted. Left out, with why:
#   positive_data_acceptance: a request can satisfy the schema and still be refused for what
#     the schema cannot say (a filter's grammar, vectors of the collection's dim, an attribute
#     of its schema), so 400 is right there;
#   ensure_resource_availability: it blames the collection for a 404 that names something else
#     in the body (a released snapshot token).
# Afterwards the server must still answer /health and exit 0 on SIGTERM.
#
# Usage: tools/run-schemathesis.sh [SIEVE_BINARY] (default build/tools/sieve). Bounded: at
# most SIEVE_SCHEMATHESIS_EXAMPLES (default 100) cases per operation and phase, and 300 s.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
sieve=${1:-$root/build/tools/sieve}
py=$(bash "$root/tools/python-env.sh")
st="$(dirname "$py")/schemathesis"
examples=${SIEVE_SCHEMATHESIS_EXAMPLES:-100}
work=$(mktemp -d)
server_pid=
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then kill -9 "$server_pid"; fi
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/backups" "$root/build/schemathesis"
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
printf '%s\n' "$token" >"$work/token"
"$sieve" serve "$work/db" --create --listen 127.0.0.1:0 --token-file "$work/token" \
  --backup-dir "$work/backups" --max-memory 256M >"$work/serve.out" 2>"$work/serve.err" &
server_pid=$!
for _ in $(seq 100); do
  grep -q listening "$work/serve.out" 2>/dev/null && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
  sleep 0.1
done
address=$(sed -n 's/.*"listening": "\(.*\)".*/\1/p' "$work/serve.out")
[ -n "$address" ] || { echo "run-schemathesis: the server did not start" >&2; exit 1; }
echo "run-schemathesis: sieve serve on $address, $examples cases per operation and phase" >&2
# The document the server serves, which must be the repository's (schemathesis leaves out the
# operation that serves the document it reads from a URL, so it reads this copy instead).
"$py" - "$address" "$token" "$work/openapi.json" "$root/tools/server/openapi.json" <<'EOF'
import json, sys, urllib.request
req = urllib.request.Request("http://%s/openapi.json" % sys.argv[1],
                             headers={"Authorization": "Bearer " + sys.argv[2]})
served = urllib.request.urlopen(req, timeout=30).read()
with open(sys.argv[3], "wb") as f:
    f.write(served)
with open(sys.argv[4], "rb") as f:
    if json.loads(served) != json.loads(f.read()):
        sys.exit("run-schemathesis: GET /openapi.json is not tools/server/openapi.json")
EOF
status=0
cd "$work"
timeout 300 "$st" run "$work/openapi.json" --url "http://$address" \
  -H "Authorization: Bearer $token" \
  --checks all --exclude-checks positive_data_acceptance,ensure_resource_availability \
  --max-examples "$examples" --request-timeout 60 --generation-database none --no-color \
  --report junit --report-dir "$root/build/schemathesis" >"$work/st.out" 2>&1 || status=$?
tail -n 40 "$work/st.out" >&2
if [ $status -ne 0 ]; then
  cp "$work/st.out" "$root/build/schemathesis/output.txt"
  echo "run-schemathesis: failed (exit $status); the whole output is in" \
    "build/schemathesis/output.txt" >&2
  exit 1
fi
# Every operation of the document was tested.
selected=$(sed -n 's/^ *Selected: \([0-9]*\)\/\([0-9]*\)$/\1 \2/p' "$work/st.out")
tested=$(sed -n 's/^ *Tested: \([0-9]*\)$/\1/p' "$work/st.out")
read -r chosen total <<<"$selected"
if [ -z "$tested" ] || [ "$chosen" != "$total" ] || [ "$tested" != "$total" ]; then
  echo "run-schemathesis: not every operation was tested (selected $selected, tested" \
    "${tested:-?})" >&2
  exit 1
fi
# The server survived it whole.
health=$("$py" - "$address" "$token" <<'EOF'
import sys, urllib.request
req = urllib.request.Request("http://%s/health" % sys.argv[1],
                             headers={"Authorization": "Bearer " + sys.argv[2]})
print(urllib.request.urlopen(req, timeout=30).status)
EOF
)
[ "$health" = 200 ] || { echo "run-schemathesis: /health answered $health" >&2; exit 1; }
kill -TERM "$server_pid"
wait "$server_pid" || { echo "run-schemathesis: sieve serve exited $?" >&2; exit 1; }
server_pid=
if grep -q "internal error" "$work/serve.err"; then
  grep "internal error" "$work/serve.err" >&2
  exit 1
fi
echo "run-schemathesis: every one of $total operations conforms" >&2
