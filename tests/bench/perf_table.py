#!/usr/bin/env python3
"""perf_table.py - kernels/PERF.md's tables from one run's results:
kvlab bench --json (bench.json), torch_peer.py --out (peer.json) and
kvlab bench --itl --json (itl.json), all from the same GPU lease, and,
when RESULTS_DIR/fp8_paths/ holds them, FP8 path A's runs beside path B.
usage: perf_table.py RESULTS_DIR"""
import json, os, sys

d = sys.argv[1]
b = json.load(open(d + "/bench.json"))
p = json.load(open(d + "/peer.json"))
itl = json.load(open(d + "/itl.json"))
copy = b["copy_GBps"]
peer = {(r["batch"], r["context"]): r for r in p["rows"]}
rows = {(r["format"], r["batch"], r["context"]): r for r in b["rows"]}

print("| format | B | S | KV bytes | floor ms | kvlab ms | gap | of copy | torch flash SDPA ms | kvlab / torch | naive FP8 ms |")
print("|---|---|---|---|---|---|---|---|---|---|---|")
for r in b["rows"]:
    floor = int(r["kv_bytes"]) / (copy * 1e9) * 1e3
    pr = peer.get((r["batch"], r["context"]), {})
    t = pr.get("sdpa_flash_bf16_ms")
    naive = pr.get("naive_fp8_ms") if r["format"] == "fp8_e4m3" else None
    print("| %s | %d | %dk | %s | %.4f | %.4f | %.1fx | %.0f%% | %s | %s | %s |" % (
        r["format"], r["batch"], r["context"] // 1024, "{:,}".format(int(r["kv_bytes"])), floor,
        r["attention_ms"], r["attention_ms"] / floor, 100 * r["copy_fraction"],
        "%.4f" % t if t and r["format"] == "bf16" else "",
        "%.2f" % (r["attention_ms"] / t) if t and r["format"] == "bf16" else "",
        "%.4f" % naive if naive else ""))
print()
print("| format | S >= 32k: time / kvlab BF16 (B=1, B=16) |")
print("|---|---|")
for f in ["fp8_e4m3", "int8", "int4", "nvfp4", "mxfp4"]:
    cells = []
    for B in (1, 16):
        ratios = ["%.2f" % (rows[(f, B, S)]["attention_ms"] / rows[("bf16", B, S)]["attention_ms"])
                  for S in (32768, 65536, 131072) if (f, B, S) in rows]
        cells.append("B=%d: %s" % (B, " / ".join(ratios)))
    print("| %s | %s |" % (f, "; ".join(cells)))
print()
print("Weight stream (the model's weights read once): %.3f ms." % itl["weights_ms"])
print()
print("| format | ITL slope, ms per context token (32 layers + weights, B=1) | ratio to BF16 |")
print("|---|---|---|")
for f in itl["fits"]:
    print("| %s | %.3e | %.2f |" % (f["format"], f["slope_ms_per_token"], f["ratio_to_bf16"]))

# FP8 path B (bench.json) against path A (and A with a promotion after every
# block): kvlab bench --format bf16 --format fp8 --fp8-path A --json in fp8_paths/
fp = d + "/fp8_paths"
runs = [("A", "path_a.json"), ("A, promote 1", "path_a_promote1.json")]
if all(os.path.isfile(fp + "/" + f) for _, f in runs):
    data = [("B", rows)] + [(name, {(r["format"], r["batch"], r["context"]): r
                                    for r in json.load(open(fp + "/" + f))["rows"]}) for name, f in runs]
    print()
    print("FP8 path B (bench.json) against path A (fp8_paths/), each with the BF16 rows of its own command:")
    print()
    print("| B | S | " + " | ".join("fp8 %s ms (x BF16)" % n for n, _ in data) + " |")
    print("|---|---|" + "---|" * len(data))
    for (f, B, S) in sorted(data[0][1]):
        if f != "fp8_e4m3":
            continue
        cells = ["%.4f (%.2f)" % (rr[(f, B, S)]["attention_ms"],
                                  rr[(f, B, S)]["attention_ms"] / rr[("bf16", B, S)]["attention_ms"])
                 for _, rr in data]
        print("| %d | %dk | %s |" % (B, S // 1024, " | ".join(cells)))
