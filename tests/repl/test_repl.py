#!/usr/bin/env python3
"""Tests of the `moontorch` executable: the REPL driven through a
pseudo-terminal (as a user at a terminal sees it) and the script runner.

usage: python3 tests/repl/test_repl.py [path/to/moontorch]
       (default: $MOONTORCH, else build/moontorch)

Prints `ok - name` or `not ok - name: reason` per check and ends with
`N passed, N failed`; exits non-zero if any check failed. Where no
pseudo-terminal can be opened (no /dev/pts), the REPL groups are reported as
`ok - name # SKIP ...` and counted on a `# N skipped: reason` line; the
script runner checks still run. Standard library only; HOME points to a
temporary directory so the user's history is safe.

Every step waits for a state of the session (a prompt, an echo, a marker
the command prints) rather than sleeping, with generous timeouts: a loaded
machine makes a run slower, never wrong. A wait that times out fails its
check and the group stops there.
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
WAIT = 20.0  # seconds a step may take before it counts as stuck
results = {"passed": 0, "failed": 0, "skipped": 0}
DEADLINE = time.monotonic() + 240  # the whole run stays bounded even if every wait times out


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


class Stuck(Exception):
    """A session did not reach the state a step waited for."""


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

    def expect(self, pattern, timeout=WAIT):
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

    def need(self, pattern, what, timeout=WAIT):
        """expect() that raises Stuck (naming `what`) on timeout."""
        m = self.expect(pattern, timeout)
        if m is None:
            raise Stuck(f"no {what} within {timeout:.0f} s; output ends {self.text()[-300:]!r}")
        return m

    def run(self, line, timeout=WAIT):
        """Sends a line (the prompt is up: every step ends waiting for it)
        and waits for the next prompt; returns what came between."""
        start = len(self.text())
        self.send(line + "\r")
        self.pos = start
        m = self.expect(PROMPT, timeout)
        out = self.text()[start : m.start() if m else None]
        return out, m is not None

    def output_since(self, start):
        return self.text()[start:]

    def close(self, timeout=WAIT):
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
        self.kill()
        return None

    def kill(self):
        try:
            os.kill(self.pid, signal.SIGKILL)
            os.waitpid(self.pid, 0)
            os.close(self.fd)
        except OSError:
            pass


def check_output(name, out, ok, want):
    report(name, ok and want(out), f"got {out!r}")


def started():
    """A session at its first prompt."""
    s = Session()
    s.need(PROMPT, "first prompt")
    return s


# ---- REPL groups: each gets its own session ----


def group_basics():
    s = Session()
    m = s.expect(PROMPT)
    report("REPL shows a prompt", m is not None, f"got {s.text()!r}")
    if m is None:
        s.kill()
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
    s.need(r"\n>> $", "continuation prompt")
    s.send("print(i*10)\r")
    s.need(r"\n>> $", "continuation prompt")
    out, ok = s.run("end")
    check_output("multi-line for loop", out, ok, lambda o: "10\n20\n" in o)

    out, ok = s.run('error("boom")')
    check_output("error is printed", out, ok, lambda o: "boom" in o)
    out, ok = s.run("6*7")
    check_output("session goes on after an error", out, ok, lambda o: "42" in o)
    out, ok = s.run("local function f() error('deep') end f()")
    check_output("error in a function shows a traceback", out, ok, lambda o: "deep" in o and "traceback" in o)

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
    out, ok = s.run("help(torch.zeros)")
    check_output("help(torch.zeros) shows its text", out, ok, lambda o: "zeros" in o)
    out, ok = s.run("8*8")
    check_output("session works after help", out, ok, lambda o: "64" in o)

    s.run("myvariable_xyz = 4242")
    status = s.close()
    report("Ctrl-D exits with status 0", status == 0, f"status {status}")
    try:
        with open(os.path.join(HOME, ".moontorch_history")) as f:
            hist = f.read().splitlines()
    except OSError as e:
        hist = [str(e)]
    report("history file written", "myvariable_xyz = 4242" in hist and "1+1" in hist, f"got {hist[-5:]!r}")

    s = started()
    s.send("\x1b[A")  # up arrow
    recalled = s.expect(r"myvariable_xyz = 4242") is not None
    report("history is recalled in a new session", recalled, f"got {s.text()[-200:]!r}")
    s.send("\x15")
    s.run(":quit")
    status = s.close()
    report(":quit exits with status 0", status == 0, f"status {status}")


def group_pretty_print():
    s = started()
    out, ok = s.run("nn.Linear(3,4):state_dict()")
    check_output("a state dict prints its keys and tensor summaries", out, ok,
                 lambda o: "{bias: Tensor 4 float32, weight: Tensor 4x3 float32}\n" in o)
    out, ok = s.run("{1,2,3}")
    check_output("a list prints its values", out, ok, lambda o: "{1, 2, 3}\n" in o)
    out, ok = s.run("t = {name='t'}; t.self = t; return t")
    check_output("a cycle is marked", out, ok, lambda o: '{name: "t", self: <cycle: root>}' in o)
    out, ok = s.run("big = {} for i = 1, 1000 do big[i] = i end return big")
    check_output("a long table is elided with a count", out, ok, lambda o: "... (980 more)" in o and o.count("\n") < 8)
    out, ok = s.run("nn.Sequential(nn.Linear(2,2))")
    check_output("a module prints through its __tostring", out, ok, lambda o: "Sequential(\n  (1): Linear(" in o)
    out, ok = s.run("torch.float32, 'plain'")
    check_output("dtypes and strings print as print shows them", out, ok, lambda o: "torch.float32\tplain\n" in o)
    out, ok = s.run("print({})")
    check_output("print() itself is stock Lua", out, ok, lambda o: re.search(r"table: 0x[0-9a-f]+\n", o))
    s.close()


def group_completion():
    s = started()
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

    s.send("string.g\t")
    s.need(r"gmatch +gsub", "list of candidates")
    s.need(r"\n> string\.g", "line redrawn after the list")
    s.send("\x15")  # Ctrl-U: clear the line
    report("Tab on an ambiguous prefix lists the candidates", True)
    s.need(r"> $", "cleared line")

    s.run("x = torch.zeros(3, 4)")
    out, ok = s.run("x.sha\t")
    check_output("Tab completes a tensor property (x.sha -> x.shape)", out, ok, lambda o: "x.shape" in o and "{3, 4}" in o)
    out, ok = s.run("x.requires_g\t")
    check_output("Tab completes an autograd property", out, ok, lambda o: "requires_grad\nfalse\n" in o)
    s.send("x.gr\t")
    s.need(r"grad +grad_fn", "list of tensor properties")
    s.send("\x15")
    s.need(r"> $", "cleared line")
    report("Tab lists tensor properties next to methods", True)
    s.close()

    s = started()  # sub-packages before their first use
    s.send("torch.utils.\t")
    s.need(r"data +tensorboard", "list of torch.utils sub-packages")
    s.send("\x15")
    s.need(r"> $", "cleared line")
    report("Tab lists the sub-packages of torch.utils before they are loaded", True)
    out, ok = s.run("rawget(torch.utils, 'data'), rawget(torch.utils, 'tensorboard')")
    check_output("completing torch.utils. loaded neither", out, ok, lambda o: "\nnil\tnil\n" in o)
    out, ok = s.run("torch.vis\t")
    check_output("Tab completes a sub-package of torch", out, ok, lambda o: "torch.vision" in o)
    out, ok = s.run("torch.nn.Lin\t")
    check_output("Tab completes in torch.nn before it is loaded", out, ok, lambda o: "torch.nn.Linear" in o)
    s.close()


def group_interrupt():
    s = started()
    start = len(s.text())
    s.send("print('LO' .. 'OP') while true do end\r")
    s.need(r"\nLOOP\n", "marker printed before the loop")
    s.send("\x03")
    s.pos = start
    m = s.expect(r"interrupted[\s\S]*\n> $")
    report("Ctrl-C interrupts a running loop", m is not None, f"got {s.output_since(start)!r}")
    out, ok = s.run("6*9")
    check_output("session works after an interrupt", out, ok, lambda o: "54" in o)

    s.send("garbage_text_xyz")
    s.need("garbage_text_xyz", "echo of the typed text")
    s.send("\x03")
    cleared = s.expect(PROMPT) is not None
    out, ok = s.run("5*5")
    check_output("Ctrl-C at the prompt discards the line", out, ok and cleared,
                 lambda o: "25" in o and "garbage" not in o)

    s.send("for i=1,3 do\r")
    s.need(r"\n>> $", "continuation prompt")
    s.send("\x03")
    s.need(PROMPT, "prompt after Ctrl-C")
    out, ok = s.run("7*7")
    check_output("Ctrl-C at >> drops the pending lines", out, ok, lambda o: "49" in o)

    # one long C op: a sort of 3e7 elements takes seconds; Ctrl-C must stop it
    # within a small part of that (the kernel polls the engine's flag)
    out, ok = s.run("x = torch.randn(3e7); t0 = torch.time()", 60)
    start = len(s.text())
    s.send("print('SO' .. 'RT') y = x:sort()\r")
    s.need(r"\nSORT\n", "marker printed before the sort")
    time.sleep(0.5)  # let the sort get going: the Ctrl-C must land inside the kernel
    t0 = time.monotonic()
    s.send("\x03")
    s.pos = start
    m = s.expect(r"interrupted[\s\S]*\n> $")
    took = time.monotonic() - t0
    report("Ctrl-C stops a long sort (%.0f ms after the key)" % (took * 1e3), m is not None and took < 1.5,
           f"took {took:.2f} s; got {s.output_since(start)[-300:]!r}")
    out, ok = s.run("y == nil, 6*9")
    check_output("session goes on after the interrupted sort", out, ok, lambda o: "true\t54" in o)
    s.close()


REPL_GROUPS = [group_basics, group_pretty_print, group_completion, group_interrupt]


def repl_tests():
    for group in REPL_GROUPS:
        name = group.__name__[len("group_"):]
        try:
            group()
        except Stuck as e:
            report(f"REPL {name}: a step got stuck", False, str(e))
        except OSError as e:  # e.g. no process could be started on a pty
            report(f"REPL {name}: could not run a session", False, str(e))


def no_pty_reason():
    """Why no pseudo-terminal can be opened here, or None if one can."""
    try:
        master, slave = os.openpty()
    except OSError as e:
        return f"no pseudo-terminal ({e}; is /dev/pts mounted?)"
    os.close(master)
    os.close(slave)
    return None


def run(args, stdin=None, cwd=None, timeout=30):
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
    r = run(["-i"], stdin="{b = 1, a = {2}}\n")
    report("the REPL without a terminal pretty-prints too", r.returncode == 0 and "{a: {2}, b: 1}" in r.stdout,
           f"got {r.stdout!r} {r.stderr!r}")
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
    r = run(["-e", "print({1}) torch.pprint({b = 2, a = {1}})"])
    report("scripts: print is stock Lua, torch.pprint pretty-prints",
           r.returncode == 0 and re.fullmatch(r"table: 0x[0-9a-f]+\n\{a: \{1\}, b: 2\}\n", r.stdout),
           f"got {r.stdout!r} {r.stderr!r}")
    interrupt_script("Ctrl-C stops a script with status 130", "while true do end")
    interrupt_script("Ctrl-C stops a script inside a long sort", "local x = torch.randn(3e7) GO() x:sort()")


def interrupt_script(name, code):
    """Runs code as a script; once it has written GO (GO() in code, else
    first), sends SIGINT and expects status 130 and "interrupted"."""
    if "GO()" not in code:
        code = "GO() " + code
    code = "function GO() io.stdout:write('GO\\n') io.stdout:flush() end " + code
    p = subprocess.Popen([BIN, "-e", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    ready, _, _ = select.select([p.stdout], [], [], budget(60))
    go = bool(ready) and p.stdout.readline() == "GO\n"
    time.sleep(0.3)  # into the loop (or the op) that follows the marker
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=budget(WAIT))
        report(name, go and p.returncode == 130 and "interrupted" in err, f"go {go} rc {p.returncode} err {err!r}")
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        report(name, False, f"still running {WAIT:.0f} s after SIGINT")


def main():
    if not os.access(BIN, os.X_OK):
        print(f"not ok - {BIN} is not an executable (build it with make)")
        print("0 passed, 1 failed")
        return 1
    t0 = time.monotonic()
    try:
        why = no_pty_reason()
        if why:
            for group in REPL_GROUPS:
                results["skipped"] += 1
                print(f"ok - REPL {group.__name__[len('group_'):]} # SKIP {why}")
        else:
            repl_tests()
        script_tests()
    finally:
        shutil.rmtree(HOME, ignore_errors=True)
    print(f"# took {time.monotonic() - t0:.1f} s")
    if results["skipped"]:
        print(f"# {results['skipped']} skipped: REPL groups, {why}")
    print(f"{results['passed']} passed, {results['failed']} failed")
    return 1 if results["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
