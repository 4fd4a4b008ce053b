#!/usr/bin/env python3
"""floor_table.py - kernels/PERF.md's tables against a plain read, from the
results of single_stream.sh: each format's time over its own BF16's at
32k-128k, beside the same ratio for plain reads of the same bytes timed
the same way (read_ms), both rounds; the targets of the formats; BF16
against torch's flash SDPA; and batch 1 over a range of splits.
usage: floor_table.py RESULTS_DIR"""
import glob, json, os, sys

d = sys.argv[1]
TARGET = {(1, "fp8_e4m3"): 0.55, (1, "int8"): 0.56, (1, "int4"): 0.40, (1, "nvfp4"): 0.40, (1, "mxfp4"): 0.40,
          (16, "fp8_e4m3"): 0.55, (16, "int8"): 0.56, (16, "int4"): 0.36, (16, "nvfp4"): 0.33, (16, "mxfp4"): 0.32}
FORMATS = ["fp8_e4m3", "int8", "int4", "nvfp4", "mxfp4"]


def rows(path):
    return {(r["format"], r["batch"], r["context"]): r for r in json.load(open(path))["rows"]}


rounds = [rows(os.path.join(d, n)) for n in ("round_a.json", "round_b.json")]
keys = sorted({(b, s) for r in rounds for (_, b, s) in r})


def both(f, B, S, field, base):
    out = []
    for r in rounds:
        if (f, B, S) in r and (base, B, S) in r:
            out.append(r[(f, B, S)][field] / r[(base, B, S)][field])
    return " / ".join("%.3f" % x for x in out)


print("| B | S | format | kernel ms | read ms | kernel / BF16's | read / BF16's read | target |")
print("|---|---|---|---|---|---|---|---|")
for B, S in keys:
    for f in ["bf16"] + FORMATS:
        ms = " / ".join("%.4f" % r[(f, B, S)]["attention_ms"] for r in rounds if (f, B, S) in r)
        rd = " / ".join("%.4f" % r[(f, B, S)]["read_ms"] for r in rounds if (f, B, S) in r)
        ratio = both(f, B, S, "attention_ms", "bf16") if f != "bf16" else ""
        rr = both(f, B, S, "read_ms", "bf16") if f != "bf16" else ""
        t = TARGET.get((B, f))
        print("| %d | %dk | %s | %s | %s | %s | %s | %s |" % (B, S // 1024, f, ms, rd, ratio, rr,
                                                           "<= %.2f" % t if t else ""))
print()
peer = os.path.join(d, "peer.json")
if os.path.exists(peer):
    p = {(r["batch"], r["context"]): r for r in json.load(open(peer))["rows"]}
    print("| B | S | kvlab BF16 ms | torch flash SDPA ms | kvlab / torch |")
    print("|---|---|---|---|---|")
    for B, S in keys:
        if (B, S) in p:
            k = [r[("bf16", B, S)]["attention_ms"] for r in rounds if ("bf16", B, S) in r]
            t = p[(B, S)]["sdpa_flash_bf16_ms"]
            print("| %d | %dk | %s | %.4f | %s |" % (B, S // 1024, " / ".join("%.4f" % x for x in k), t,
                                                    " / ".join("%.2f" % (x / t) for x in k)))
    print()
splits = sorted(glob.glob(os.path.join(d, "splits_*.json")), key=lambda n: int(n.rsplit("_", 1)[1][:-5]))
if splits:
    runs = [(int(n.rsplit("_", 1)[1][:-5]), rows(n)) for n in splits]
    print("| B=1: ms at splits | " + " | ".join(str(n) for n, _ in runs) + " | default (round a / b) |")
    print("|---|" + "---|" * (len(runs) + 1))
    for f, B, S in sorted(runs[0][1]):
        cells = ["%.4f" % r[(f, B, S)]["attention_ms"] for _, r in runs]
        dflt = " / ".join("%.4f" % r[(f, B, S)]["attention_ms"] for r in rounds if (f, B, S) in r)
        print("| %s %dk | %s | %s |" % (f, S // 1024, " | ".join(cells), dflt))
