"""Runs a Python script (the first argument, with the rest as its arguments) as its
__main__ and, as it ends however it ends, writes on stderr the CPU this process used:
the script's own, not its children's (a stand-in agent's shell and wall are not the
agent). BenchmarkRunThroughput (throughput_test.go) runs the stand-in agent through it,
in the run and in the loop alike, and sums what it says."""
import resource
import sys

sys.argv = sys.argv[1:]
try:
    with open(sys.argv[0]) as f:
        code = compile(f.read(), sys.argv[0], "exec")
    exec(code, {"__name__": "__main__", "__file__": sys.argv[0]})
finally:
    r = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write("agent-cpu-s %.6f\n" % (r.ru_utime + r.ru_stime))
