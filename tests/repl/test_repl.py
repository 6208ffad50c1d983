#!/usr/bin/env python3
"""Tests of the `moontorch` executable: the REPL driven through a
pseudo-terminal (as a user at a terminal sees it) and the script runner.

usage: python3 tests/repl/test_repl.py [path/to/moontorch]
       (default: $MOONTORCH, else build/moontorch)

Prints `ok - name` or `not ok - name: reason` per check and ends with
`N passed, N failed`; exits non-zero if any check failed. Standard library
only; HOME points to a temporary directory so the user's history is safe.
"""
import fcntl
import os
import pty
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import termios
import time

BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.environ.get("MOONTORCH", "build/moontorch"))
HOME = tempfile.mkdtemp(prefix="moontorch-test-")
PROMPT = re.compile(r"(?:^|(?<=\n))> $")
ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b[()][0-9A-Za-z]|\x1b[=>]|[\r\x07]")
results = {"passed": 0, "failed": 0}
DEADLINE = time.monotonic() + 60  # the whole run stays bounded (about a minute) even if every wait times out, with room for loaded or sanitizer builds


def budget(seconds):
    """A timeout of `seconds`, cut short near the deadline."""
    return max(0.2, min(seconds, DEADLINE - time.monotonic()))


def report(name, ok, reason=""):
    if ok:
        results["passed"] += 1
        print(f"ok - {name}")
    else:
        results["failed"] += 1
        print(f"not ok - {name}: {reason}")
    sys.stdout.flush()


class Session:
    """moontorch running on a pseudo-terminal, 120 columns wide."""

    def __init__(self, *args):
        self.start = time.monotonic()
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            try:
                os.environ.update(HOME=HOME, TERM="xterm", LANG="C.UTF-8")
                os.execv(BIN, [BIN, *args])
            finally:
                os._exit(127)
        fcntl.ioctl(self.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
        self.raw = b""
        self.pos = 0  # start of what expect() has not consumed yet

    def text(self):
        return ANSI.sub("", self.raw.decode("utf-8", "replace")).replace("\b", "")

    def send(self, s):
        os.write(self.fd, s.encode())

    def _read(self, deadline):
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        ready, _, _ = select.select([self.fd], [], [], left)
        if not ready:
            return False
        try:
            chunk = os.read(self.fd, 65536)
        except OSError:  # the child exited
            return False
        self.raw += chunk
        return bool(chunk)

    def expect(self, pattern, timeout=5.0):
        """Waits for regex `pattern` in the output after the last match;
        returns the match (or None on timeout) and consumes up to its end."""
        rx = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + budget(timeout)
        while True:
            m = rx.search(self.text(), self.pos)
            if m:
                self.pos = m.end()
                return m
            if not self._read(deadline):
                return None

    def run(self, line, timeout=5.0):
        """Sends a line, waits for the next prompt; returns what came between.
        (Waits a moment first: input sent while the prompt is being drawn,
        before the line editor takes the terminal, is echoed twice.)"""
        time.sleep(0.03)
        start = len(self.text())
        self.send(line + "\r")
        self.pos = start
        m = self.expect(PROMPT, timeout)
        out = self.text()[start : m.start() if m else None]
        return out, m is not None

    def output_since(self, start):
        return self.text()[start:]

    def close(self, timeout=5.0):
        """Ends the session with Ctrl-D; returns the exit status or None."""
        try:
            self.send("\x04")
        except OSError:  # already gone
            pass
        deadline = time.monotonic() + budget(timeout)
        while time.monotonic() < deadline:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                os.close(self.fd)
                return os.waitstatus_to_exitcode(status)
            self._read(min(deadline, time.monotonic() + 0.1))
        os.kill(self.pid, signal.SIGKILL)
        os.waitpid(self.pid, 0)
        os.close(self.fd)
        return None


def check_output(name, out, ok, want):
    report(name, ok and want(out), f"got {out!r}")


def repl_tests():
    s = Session()
    m = s.expect(PROMPT, 10)
    report("REPL shows a prompt", m is not None, f"got {s.text()!r}")
    if m is None:
        s.close()
        return
    report("startup to prompt (%.1f ms)" % (1e3 * (time.monotonic() - s.start)), True)

    out, ok = s.run("1+1")
    check_output("auto-print of 1+1", out, ok, lambda o: re.search(r"\n2\n", o))
    out, ok = s.run("1+2, 'x'")
    check_output("several results are tab-separated", out, ok, lambda o: "3\tx\n" in o)
    out, ok = s.run("40+3;")
    check_output("trailing ; suppresses printing", out, ok, lambda o: "43" not in o.replace("40+3", ""))
    out, ok = s.run("print(nil)")
    check_output("statement prints only what it prints", out, ok, lambda o: o.endswith("nil\n"))

    s.send("for i=1,2 do\r")
    cont = s.expect(r"\n>> $") is not None
    s.send("print(i*10)\r")
    cont = cont and s.expect(r"\n>> $") is not None
    out, ok = s.run("end")
    check_output("multi-line for loop", out, ok and cont, lambda o: "10\n20\n" in o)

    out, ok = s.run('error("boom")')
    check_output("error is printed", out, ok, lambda o: "boom" in o)
    out, ok = s.run("6*7")
    check_output("session goes on after an error", out, ok, lambda o: "42" in o)
    out, ok = s.run("local function f() error('deep') end f()")
    check_output("error in a function shows a traceback", out, ok, lambda o: "deep" in o and "traceback" in o)

    s.run("myvariable_xyz = 4242")
    out, ok = s.run("myvar\t")
    check_output("Tab completes a global", out, ok, lambda o: "4242" in o)
    out, ok = s.run('string.for\t("%d", 31337)')
    check_output("Tab completes a table field", out, ok, lambda o: "31337" in o)
    s.run("obj_xyz = setmetatable({}, {__methods = {frobnicate = function() return 'frob' .. 'bed' end},"
          " __index = function(t, k) return getmetatable(t).__methods[k] end})")
    out, ok = s.run("obj_xyz:frob\t()")
    check_output("Tab completes a method from __methods", out, ok, lambda o: "frobbed" in o)
    out, ok = s.run("io.stdout:wri\t('w', 'ritten', '\\n');")
    check_output("Tab completes a userdata method via __index", out, ok, lambda o: "written" in o)
    out, ok = s.run("stri\t.reve\t('abc')")
    check_output("Tab twice in one line", out, ok, lambda o: "cba" in o)

    time.sleep(0.03)
    s.send("string.g\t")
    listed = s.expect(r"gmatch +gsub", 3) is not None and s.expect(r"\n> string\.g", 3) is not None
    s.send("\x15")  # Ctrl-U: clear the line
    report("Tab on an ambiguous prefix lists the candidates", listed, f"got {s.text()[-300:]!r}")

    start = len(s.text())
    s.send("while true do end\r")
    time.sleep(0.3)
    s.send("\x03")
    s.pos = start
    m = s.expect(r"interrupted[\s\S]*\n> $", 5)
    report("Ctrl-C interrupts a running loop", m is not None, f"got {s.output_since(start)!r}")
    out, ok = s.run("6*9")
    check_output("session works after an interrupt", out, ok, lambda o: "54" in o)

    start = len(s.text())
    s.send("garbage_text_xyz")
    s.expect("garbage_text_xyz", 2)
    s.send("\x03")
    cleared = s.expect(PROMPT, 3) is not None
    out, ok = s.run("5*5")
    check_output("Ctrl-C at the prompt discards the line", out, ok and cleared,
                 lambda o: "25" in o and "garbage" not in o)

    s.send("for i=1,3 do\r")
    s.expect(r"\n>> $", 3)
    s.send("\x03")
    s.expect(PROMPT, 3)
    out, ok = s.run("7*7")
    check_output("Ctrl-C at >> drops the pending lines", out, ok, lambda o: "49" in o)

    out, ok = s.run(":time on")
    out, ok = s.run("2+2")
    check_output(":time on prints a time", out, ok, lambda o: re.search(r"\(\d+(\.\d+)? (s|ms|us)\)", o))
    out, ok = s.run(":time off")
    out, ok = s.run("3+3")
    check_output(":time off stops it", out, ok, lambda o: "(" not in o)
    out, ok = s.run(":help")
    check_output(":help lists REPL commands", out, ok, lambda o: ":time" in o and ":quit" in o)

    out, ok = s.run("?print")
    check_output("?print does not crash", out, ok, lambda o: "print" in o or "help" in o)
    out, ok = s.run("help(print)")
    check_output("help(print) does not crash", out, ok, lambda o: "print" in o or "help" in o)
    out, ok = s.run("8*8")
    check_output("session works after help", out, ok, lambda o: "64" in o)

    status = s.close()
    report("Ctrl-D exits with status 0", status == 0, f"status {status}")
    try:
        with open(os.path.join(HOME, ".moontorch_history")) as f:
            hist = f.read().splitlines()
    except OSError as e:
        hist = [str(e)]
    report("history file written", "myvariable_xyz = 4242" in hist and "1+1" in hist, f"got {hist[-5:]!r}")

    s = Session()
    s.expect(PROMPT, 10)
    s.send("\x1b[A")  # up arrow
    recalled = s.expect(r"8\*8", 3) is not None
    report("history is recalled in a new session", recalled, f"got {s.text()[-200:]!r}")
    s.send("\x15")
    s.run(":quit")
    status = s.close()
    report(":quit exits with status 0", status == 0, f"status {status}")


def run(args, stdin=None, cwd=None, timeout=10):
    """Runs moontorch with args; a run that times out is killed with
    everything it started and reported with returncode None."""
    p = subprocess.Popen([BIN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, cwd=cwd, env=dict(os.environ, HOME=HOME), start_new_session=True)
    try:
        out, err = p.communicate(stdin, timeout=budget(timeout))
        return subprocess.CompletedProcess(args, p.returncode, out, err)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        return subprocess.CompletedProcess(args, None, "", "(timed out)")


def script_tests():
    tmp = os.path.join(HOME, "scripts")
    os.mkdir(tmp)
    script = os.path.join(tmp, "args.lua")
    with open(script, "w") as f:
        f.write("print(arg[0], arg[1], arg[2], #arg, select('#', ...), type(torch))\n")
    r = run([script, "a", "b"])
    report("script gets arg and ...", r.returncode == 0 and r.stdout == f"{script}\ta\tb\t2\t2\ttable\n",
           f"rc {r.returncode} out {r.stdout!r} err {r.stderr!r}")
    r = run(["-e", "x = 20", "-e", "print(x + 1)"])
    report("-e runs code in order", r.returncode == 0 and r.stdout == "21\n", f"got {r.stdout!r} {r.stderr!r}")
    r = run(["-e", "y = 5", "-i"], stdin="y * 3\n")
    report("-i starts the REPL after -e", r.returncode == 0 and "15" in r.stdout, f"got {r.stdout!r} {r.stderr!r}")
    with open(os.path.join(tmp, "mymod_xyz.lua"), "w") as f:
        f.write("return {value = 99}\n")
    r = run(["-l", "mymod_xyz", "-e", "print(mymod_xyz.value)"], cwd=tmp)
    report("-l requires a module into a global", r.stdout == "99\n", f"got {r.stdout!r} {r.stderr!r}")
    r = run(["--version"])
    report("--version", r.returncode == 0 and re.fullmatch(r"moontorch \d+\.\d+\.\d+ \(Lua 5\.4\)\n", r.stdout),
           f"got {r.stdout!r}")
    r = run(["--help"])
    report("--help prints usage", r.returncode == 0 and "usage:" in r.stdout, f"got {r.stdout!r}")
    r = run(["--no-such-option"])
    report("unknown option fails", r.returncode != 0 and "--no-such-option" in r.stderr, f"got {r.stderr!r}")
    bad = os.path.join(tmp, "bad.lua")
    with open(bad, "w") as f:
        f.write("local function inner() error('script failed') end\ninner()\n")
    r = run([bad])
    report("failing script: status 1, message and traceback on stderr",
           r.returncode == 1 and "script failed" in r.stderr and "traceback" in r.stderr and "bad.lua:1" in r.stderr,
           f"rc {r.returncode} err {r.stderr!r}")
    r = run(["nonexistent_script.lua"])
    report("missing script fails", r.returncode == 1 and "nonexistent_script.lua" in r.stderr, f"got {r.stderr!r}")
    r = run([], stdin="print('from' .. ' stdin')\n")
    report("non-tty stdin runs as a script", r.returncode == 0 and r.stdout == "from stdin\n",
           f"got {r.stdout!r} {r.stderr!r}")
    r = run(["-", "q"], stdin="print(...)\n")
    report("- reads the script from stdin", r.returncode == 0 and r.stdout == "q\n", f"got {r.stdout!r} {r.stderr!r}")

    p = subprocess.Popen([BIN, "-e", "while true do end"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=budget(5))
        report("Ctrl-C stops a script with status 130", p.returncode == 130 and "interrupted" in err,
               f"rc {p.returncode} err {err!r}")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        report("Ctrl-C stops a script with status 130", False, "still running 5 s after SIGINT")


def main():
    if not os.access(BIN, os.X_OK):
        print(f"not ok - {BIN} is not an executable (build it with make)")
        print("0 passed, 1 failed")
        return 1
    t0 = time.monotonic()
    try:
        repl_tests()
        script_tests()
    finally:
        shutil.rmtree(HOME, ignore_errors=True)
    print(f"# took {time.monotonic() - t0:.1f} s")
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
