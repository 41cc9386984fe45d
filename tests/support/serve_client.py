"""serve_client.py: raw HTTP clients for e2e_serve_limits.sh -- what curl cannot send or will not do.

  raw PORT               sends stdin's bytes as they are on one connection to 127.0.0.1:PORT, prints
                         what comes back until the server closes or 3 s pass ("<open>" then)
  slow PORT N SECONDS [FROM]
                         opens N connections (from the address FROM, default 127.0.0.2) that send a
                         request's headers one byte every half second, and prints after SECONDS how
                         many the server has closed, "closed K of N" (connections it refused count)
  slow-body PORT SECONDS sends the headers of a POST at once and its body one byte a second; prints
                         "closed after S s" when the server closes, or "open" after SECONDS
  abandon PORT N BYTES   sends N requests, each with a body of BYTES bytes (a text of short
                         sentences), closing each connection as soon as its body is sent
Every socket has a timeout; nothing waits more than the seconds given (or 3 s).
"""
import socket
import sys
import time


def connect(port, source=None):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.settimeout(3)
    if source:
        s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    return s


def closed_by_server(s):
    """Whether the server has closed s (reads what is there without waiting)."""
    s.setblocking(False)
    try:
        return s.recv(65536) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


def raw(port):
    s = connect(port)
    s.sendall(sys.stdin.buffer.read())
    out = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            out += d
    except socket.timeout:
        out += b"<open>"
    except OSError:
        out += b"<reset>"
    sys.stdout.write(out.decode("utf-8", "replace"))


def slow(port, n, seconds, source):
    request = b"GET /health HTTP/1.1\r\nHost: x\r\nUser-Agent: " + b"y" * 200 + b"\r\n\r\n"
    conns = []
    for _ in range(n):
        try:
            conns.append(connect(port, source))
        except OSError:
            conns.append(None)
    sent, end = 0, time.time() + seconds
    gone = set(i for i, s in enumerate(conns) if s is None)
    while time.time() < end:
        for i, s in enumerate(conns):
            if i in gone:
                continue
            try:
                s.send(request[sent:sent + 1])
            except OSError:
                gone.add(i)
        sent = min(sent + 1, len(request) - 3)
        time.sleep(0.5)
    for i, s in enumerate(conns):
        if i not in gone and closed_by_server(s):
            gone.add(i)
    print("closed %d of %d" % (len(gone), n))


def slow_body(port, seconds):
    s = connect(port)
    body = b'{"q": "the cat", "source": "en", "target": "de"}'
    s.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n" % len(body))
    start = time.time()
    for i in range(len(body)):
        if time.time() - start > seconds:
            break
        try:
            s.send(body[i:i + 1])
        except OSError:
            print("closed after %.0f s" % (time.time() - start))
            return
        time.sleep(1)
        if closed_by_server(s):
            print("closed after %.0f s" % (time.time() - start))
            return
        s.setblocking(True)
        s.settimeout(3)
    print("open")


def abandon(port, n, size):
    words = (b"The cat sees a dog. " * (size // 20 + 1))[:size - 60]
    body = b'{"q": "' + words + b'", "source": "en", "target": "de"}'
    refused = 0
    for _ in range(n):
        try:
            s = connect(port)
            s.sendall(b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                      b"Content-Length: %d\r\n\r\n" % len(body) + body)
            s.close()
        except OSError:  # the server refused the connection (too many of this client's still open)
            refused += 1
    print("sent %d, refused %d" % (n - refused, refused))


def main():
    mode, port = sys.argv[1], int(sys.argv[2])
    if mode == "raw":
        raw(port)
    elif mode == "slow":
        slow(port, int(sys.argv[3]), float(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else "127.0.0.2")
    elif mode == "slow-body":
        slow_body(port, float(sys.argv[3]))
    elif mode == "abandon":
        abandon(port, int(sys.argv[3]), int(sys.argv[4]))
    else:
        sys.exit("serve_client.py: unknown mode " + mode)


main()
