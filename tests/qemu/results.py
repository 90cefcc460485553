"""tests/qemu/results.py - the counters and result lines the QEMU test drivers
share, with the two kinds of skip kept apart as in tests/unit/test.h and
tests/lib.sh:

  skip_data(name, why)          the reference data the test needs is missing:
                                a skip, or a failure when LLMK_REQUIRE_TESTDATA=1
  skip_cpu(name, feature, why)  the (emulated) CPU lacks feature: always a
                                skip, the feature named
  skip(name, why)               an optional client the test names is absent
                                (the `openai` npm package without npm) or a
                                tool the stage documents as optional

A path the CPU has is never skipped, and nothing else is a skip: a missing
build product or tool is a failure. summary() prints the closing line
"N passed, N failed, N skipped" and returns the exit status. Python standard
library only.
"""
import os

counts = {"passed": 0, "failed": 0, "skipped": 0}


def testdata():
    return os.environ.get("LLMK_TESTDATA", "../shared/testdata")


def ok(name):
    counts["passed"] += 1
    print(f"ok   {name}", flush=True)


def fail(name, why="", last=25):
    counts["failed"] += 1
    print(f"FAIL {name}", flush=True)
    for line in str(why).splitlines()[-last:]:
        print(f"     {line}", flush=True)


def check(name, cond, why=""):
    (ok(name) if cond else fail(name, why))
    return cond


def skip_data(name, why):
    if os.environ.get("LLMK_REQUIRE_TESTDATA") == "1":
        counts["failed"] += 1
        print(f"FAIL {name}: skipped but LLMK_REQUIRE_TESTDATA=1: {why}", flush=True)
    else:
        counts["skipped"] += 1
        print(f"skip {name}: {why}", flush=True)


def skip(name, why):
    counts["skipped"] += 1
    print(f"skip {name}: {why}", flush=True)


def skip_cpu(name, feature, why):
    counts["skipped"] += 1
    print(f"skip {name}: CPU lacks {feature}: {why}", flush=True)


def summary():
    print(f"{counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped",
          flush=True)
    return 0 if counts["failed"] == 0 else 1
