#!/usr/bin/env python3
"""tests/verify/measure_snp.py VERIFIER — `verifier measure snp` end to end.

Runs the program on every case of $LLMK_TESTDATA/attest/snp-measure/
expected.json (kernel/initrd "" are empty files, null means no -kernel) and
compares the printed digest; checks that changing vCPUs, signature,
features, the command line, the kernel, the initrd or one byte of OVMF each
changes it; and that bad input gets exit 1 and one "error:" line, never a
crash. Ends with "N passed, N failed, N skipped"."""
import json
import os
import subprocess
import sys
import tempfile

VERIFIER = sys.argv[1] if len(sys.argv) > 1 else "build/host/verifier"
TESTDATA = os.environ.get("LLMK_TESTDATA", "../shared/testdata")
REQUIRE = os.environ.get("LLMK_REQUIRE_TESTDATA") == "1"
DATA = os.path.join(TESTDATA, "attest", "snp-measure")

passed = failed = skipped = 0


def ok(name):
    global passed
    passed += 1
    print("ok   " + name)


def bad(name, why):
    global failed
    failed += 1
    print("FAIL " + name)
    for line in str(why).splitlines()[:10]:
        print("     " + line)


def skip(name, why):
    global skipped, failed
    if REQUIRE:
        bad(name, "LLMK_REQUIRE_TESTDATA=1 and " + why)
        return
    skipped += 1
    print("skip %s: %s" % (name, why))


def run(args):
    return subprocess.run([VERIFIER, "measure", "snp"] + args, capture_output=True,
                          text=True, timeout=60)


def digest(args):
    r = run(args)
    if r.returncode != 0 or r.stderr or len(r.stdout.strip()) != 96:
        raise RuntimeError("exit %d, stdout %r, stderr %r" % (r.returncode, r.stdout, r.stderr))
    return r.stdout.strip()


def case_args(c, tmp):
    a = ["--ovmf", os.path.join(DATA, c["ovmf"]), "--vcpus", str(c["vcpus"]),
         "--vcpu-sig", c["vcpu_sig"], "--guest-features", c["guest_features"]]
    for key in ("kernel", "initrd"):
        if c[key] is None:
            continue
        if c[key] != "":
            raise ValueError("case names a %s file %r this driver does not have" % (key, c[key]))
        a += ["--" + key, os.path.join(tmp, "empty")]
    if c["append"] is not None:
        a += ["--append", c["append"]]
    return a


def refuse(name, args, want):
    r = run(args)
    lines = r.stderr.splitlines()
    if r.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: ") \
            and want in lines[0] and not r.stdout:
        ok(name)
    else:
        bad(name, "exit %d, stdout %r, stderr %r (want one error line with %r)"
            % (r.returncode, r.stdout, r.stderr, want))


def main():
    with tempfile.TemporaryDirectory() as tmp:
        open(os.path.join(tmp, "empty"), "wb").close()
        exp_path = os.path.join(DATA, "expected.json")
        if not os.path.exists(exp_path):
            skip("expected.json cases", exp_path + " is missing")
            cases = []
        else:
            with open(exp_path) as f:
                cases = json.load(f)["cases"]
        for i, c in enumerate(cases):
            name = "case %d: %s, %d vCPU, features %s, kernel %s" % (
                i, c["ovmf"], c["vcpus"], c["guest_features"],
                "none" if c["kernel"] is None else "empty")
            try:
                got = digest(case_args(c, tmp))
                if got == c["digest"]:
                    ok(name)
                else:
                    bad(name, "got  %s\nwant %s" % (got, c["digest"]))
            except Exception as e:  # a crash or refusal is a failure of this case
                bad(name, e)

        amdsev = os.path.join(DATA, "ovmf_AmdSev_suffix.bin")
        if not os.path.exists(amdsev):
            skip("changed inputs", amdsev + " is missing")
        else:
            changed_inputs(amdsev, tmp)
        bad_input(amdsev, tmp)
    print("%d passed, %d failed, %d skipped" % (passed, failed, skipped))
    return 1 if failed else 0


def changed_inputs(amdsev, tmp):
    kern = os.path.join(tmp, "kernel")
    with open(kern, "wb") as f:
        f.write(b"MZ" + bytes(range(256)) * 64)
    initrd = os.path.join(tmp, "initrd")
    with open(initrd, "wb") as f:
        f.write(b"initrd")
    base = ["--ovmf", amdsev, "--vcpus", "2", "--vcpu-sig", "0x800F12",
            "--guest-features", "0x21", "--kernel", kern, "--append", "console=ttyS0"]
    try:
        b = digest(base)
    except Exception as e:
        bad("changed inputs: base digest", e)
        return

    def with_opt(opt, val):
        a = list(base)
        if opt in a:
            a[a.index(opt) + 1] = val
        else:
            a += [opt, val]
        return a

    flipped = bytearray(open(amdsev, "rb").read())
    flipped[0] ^= 1
    flipped_path = os.path.join(tmp, "ovmf_flipped.bin")
    open(flipped_path, "wb").write(flipped)
    kern2 = os.path.join(tmp, "kernel2")
    k = bytearray(open(kern, "rb").read())
    k[-1] ^= 1
    open(kern2, "wb").write(k)
    variants = [
        ("vcpus", with_opt("--vcpus", "3")),
        ("vcpu-sig", with_opt("--vcpu-sig", "0xA00F11")),
        ("guest-features", with_opt("--guest-features", "0x1")),
        ("append", with_opt("--append", "console=ttyS1")),
        ("kernel", with_opt("--kernel", kern2)),
        ("initrd", with_opt("--initrd", initrd)),
        ("one OVMF byte", with_opt("--ovmf", flipped_path)),
    ]
    for what, args in variants:
        name = "changing %s changes the digest" % what
        try:
            d = digest(args)
            if d != b:
                ok(name)
            else:
                bad(name, "same digest " + d)
        except Exception as e:
            bad(name, e)
    # --opt=VALUE is the same as --opt VALUE
    eq = ["--ovmf=" + amdsev, "--vcpus=2", "--vcpu-sig=0x800f12", "--guest-features=33",
          "--kernel=" + kern, "--append=console=ttyS0"]
    try:
        if digest(eq) == b:
            ok("--opt=VALUE, decimal and lower-case hex give the same digest")
        else:
            bad("--opt=VALUE, decimal and lower-case hex give the same digest", "differs")
    except Exception as e:
        bad("--opt=VALUE, decimal and lower-case hex give the same digest", e)


def bad_input(amdsev, tmp):
    ovmfx64 = os.path.join(DATA, "ovmf_OvmfX64_suffix.bin")
    std = ["--vcpus", "1", "--vcpu-sig", "0x800F12", "--guest-features", "0x21"]
    junk = os.path.join(tmp, "junk.bin")
    open(junk, "wb").write(bytes(8192))
    odd = os.path.join(tmp, "odd.bin")
    open(odd, "wb").write(bytes(5000))
    refuse("no --ovmf", std, "--ovmf FILE is required")
    refuse("missing --vcpu-sig", ["--ovmf", junk, "--vcpus", "1", "--guest-features", "1"],
           "are required")
    refuse("unknown option", ["--ovmf", junk, "--bogus"] + std, "unknown option '--bogus'")
    refuse("option without value", std + ["--ovmf"], "--ovmf needs a value")
    refuse("option twice", ["--ovmf", junk, "--ovmf", junk] + std, "--ovmf given twice")
    refuse("vcpus 0", ["--ovmf", junk, "--vcpus", "0", "--vcpu-sig", "1", "--guest-features",
                       "1"], "--vcpus '0'")
    refuse("vcpus not a number", ["--ovmf", junk, "--vcpus", "two", "--vcpu-sig", "1",
                                  "--guest-features", "1"], "--vcpus 'two'")
    refuse("vcpu-sig too large", ["--ovmf", junk, "--vcpus", "1", "--vcpu-sig", "0x100000000",
                                  "--guest-features", "1"], "--vcpu-sig '0x100000000'")
    refuse("negative features", ["--ovmf", junk, "--vcpus", "1", "--vcpu-sig", "1",
                                 "--guest-features", "-1"], "--guest-features '-1'")
    refuse("--append without --kernel", ["--ovmf", junk, "--append", "x"] + std,
           "--append needs --kernel")
    refuse("missing OVMF file", ["--ovmf", os.path.join(tmp, "nope")] + std,
           "No such file")
    refuse("OVMF not a multiple of 4096", ["--ovmf", odd] + std, "size 5000")
    refuse("OVMF without the footer table", ["--ovmf", junk] + std, "no footer table GUID")
    refuse("missing kernel file", ["--ovmf", junk, "--kernel", os.path.join(tmp, "nope")]
           + std, "--kernel")
    if os.path.exists(ovmfx64):
        refuse("--kernel with an OVMF that does not measure it",
               ["--ovmf", ovmfx64, "--kernel", os.path.join(tmp, "empty")] + std,
               "no SNP_KERNEL_HASHES section")
        refuse("features without SNPActive", ["--ovmf", ovmfx64, "--vcpus", "1", "--vcpu-sig",
                                              "1", "--guest-features", "0x20"], "SNPActive")
    r = subprocess.run([VERIFIER, "measure", "snp", "--help"], capture_output=True, text=True,
                       timeout=60)
    if r.returncode == 0 and r.stdout.startswith("usage: verifier measure snp"):
        ok("--help prints the usage")
    else:
        bad("--help prints the usage", "exit %d, stdout %r" % (r.returncode, r.stdout))


if __name__ == "__main__":
    sys.exit(main())
