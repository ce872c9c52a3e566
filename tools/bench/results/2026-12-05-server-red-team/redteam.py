"""Server memory under the red-team requests of issue 35 item 6 (RSS of sieve serve)."""
import json, os, socket, subprocess, sys, tempfile, time, urllib.request

cli = sys.argv[1]
work = tempfile.mkdtemp()
token = "0123456789abcdef0123456789abcdef"
open(os.path.join(work, "token"), "w").write(token + "\n")
p = subprocess.Popen([cli, "serve", os.path.join(work, "db"), "--create", "--listen", "127.0.0.1:0",
                      "--token-file", os.path.join(work, "token")],
                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
addr = json.loads(p.stdout.readline())["listening"]
host, port = addr.rsplit(":", 1)

def rss():
    v = {}
    for line in open("/proc/%d/status" % p.pid):
        if line.startswith(("VmRSS", "VmHWM")):
            v[line.split(":")[0]] = int(line.split()[1]) // 1024
    return "%d / %d" % (v["VmRSS"], v["VmHWM"])

def req(method, path, body=b"", auth=True):
    r = urllib.request.Request("http://%s%s" % (addr, path), data=body or None, method=method,
                               headers={"Authorization": "Bearer " + token} if auth else {})
    try:
        with urllib.request.urlopen(r, timeout=600) as resp:
            return resp.status, len(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, len(e.read())

req("POST", "/collections", json.dumps(
    {"name": "C", "dim": 16, "attributes": {"cat": "int", "note": "string"}}).encode())
req("POST", "/collections/C/rows", json.dumps(
    {"ids": list(range(100)), "vectors": [[0.1 * j for j in range(16)]] * 100,
     "attributes": [{"cat": i, "note": "row %d" % i} for i in range(100)]}).encode())
print("| step | status | answer bytes | server RSS / peak RSS (MiB) |")
print("| --- | --- | --- | --- |")
print("| after setup | | | %s |" % rss())
import threading
conns = []
for i in range(3):
    s = socket.create_connection((host, int(port)))
    s.sendall(b"POST /collections/C/rows HTTP/1.1\r\nHost: x\r\nContent-Length: 209715200\r\n\r\n")
    sent = [0]
    def send(s=s, sent=sent):
        chunk = b"0" * (1 << 20)
        try:
            while sent[0] < 200 << 20:
                s.sendall(chunk)
                sent[0] += len(chunk)
        except OSError:
            pass
    t = threading.Thread(target=send)
    t.start()
    s.settimeout(120)
    reply = s.recv(4096).split(b"\r\n")[0].decode()
    t.join()
    conns.append(s)  # held open, as an attacker would
    print("| POST without a token, a 200 MiB body (#%d; %d MiB sent before the answer or close)"
          " | %s | | %s |" % (i + 1, sent[0] >> 20, reply, rss()))
body = json.dumps({"ids": [1] * 3000000, "include": ["*", "vector"]}).encode()
st, n = req("POST", "/collections/C/get", body)
print("| get, 3,000,000 repeated ids, include *,vector (%d-byte body) | %d | %d | %s |"
      % (len(body), st, n, rss()))
p.terminate(); p.wait()
