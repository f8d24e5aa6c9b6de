"""Folds one device run's outputs into one results file pair (results.json
and results.md), the form bench/results/ keeps: the GPU tests' pass counts
(tests/gpu/run_gpu_tests.sh logs), compute-sanitizer summaries (san_<name>.txt
files), and any bench's results.json (matmul_cubins.py, attention_cubins.py)
with its markdown table.

    python3 bench/summarize_gpu_run.py RUN_DIR DEST_DIR --title TITLE \
        [--command NAME=COMMAND ...]

RUN_DIR holds gpu_tests/*.log, san_*.txt and <bench>/results.{json,md}.
"""
import argparse
import glob
import json
import os
import re


def gpu_tests(run):
    result = {}
    for log in sorted(glob.glob(os.path.join(run, "gpu_tests", "*.log"))):
        name = os.path.basename(log)[:-4]
        text = open(log, errors="replace").read()
        passed = re.findall(r"\[  PASSED  \] (\d+) test", text)
        failed = re.findall(r"\[  FAILED  \] (\d+) test", text)
        if passed or failed:
            result[name] = {"passed": int(passed[-1]) if passed else 0,
                            "failed": int(failed[-1]) if failed else 0}
        else:
            result[name] = "ok" if re.search(r"\bok\b|RESULT", text) and "FAILED" not in text else "see log"
    return result


def sanitizers(run):
    result = {}
    for path in sorted(glob.glob(os.path.join(run, "san_*.txt"))):
        text = open(path, errors="replace").read()
        summary = re.findall(r"(ERROR SUMMARY: .*|RACECHECK SUMMARY: .*)", text)
        wrong = len(re.findall(r"correct False", text))
        checked = len(re.findall(r"correct True", text))
        result[os.path.basename(path)[4:-4]] = {"summary": summary[-1] if summary else "no summary",
                                                "outputs_checked": checked, "outputs_wrong": wrong}
    return result


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("run")
    parser.add_argument("dest")
    parser.add_argument("--title", required=True)
    parser.add_argument("--command", action="append", default=[])
    args = parser.parse_args()
    benches = {}
    for path in sorted(glob.glob(os.path.join(args.run, "*", "results.json"))):
        benches[os.path.basename(os.path.dirname(path))] = json.load(open(path))
    meta = next(iter(benches.values()), {})
    result = dict(title=args.title, date=meta.get("date"), gpu=meta.get("gpu"), triton=meta.get("triton"),
                  torch=meta.get("torch"), commands=dict(c.split("=", 1) for c in args.command),
                  gpu_tests=gpu_tests(args.run), sanitizer=sanitizers(args.run), benches=benches)
    os.makedirs(args.dest, exist_ok=True)
    json.dump(result, open(os.path.join(args.dest, "results.json"), "w"), indent=1)
    with open(os.path.join(args.dest, "results.md"), "w") as f:
        f.write(f"# {args.title}: {result['gpu']}, {result['date']}\n\n")
        f.write(f"Triton {result['triton']}, torch {result['torch']}. One device call; commands:\n\n")
        for name, command in result["commands"].items():
            f.write(f"- {name}: `{command}`\n")
        f.write("\n## GPU tests\n\n| binary | result |\n|---|---|\n")
        for name, value in result["gpu_tests"].items():
            f.write(f"| {name} | {value if isinstance(value, str) else '%d passed, %d failed' % (value['passed'], value['failed'])} |\n")
        if result["sanitizer"]:
            f.write("\n## compute-sanitizer\n\n| run | summary | outputs checked (wrong) |\n|---|---|---|\n")
            for name, value in result["sanitizer"].items():
                f.write(f"| {name} | {value['summary']} | {value['outputs_checked']} ({value['outputs_wrong']}) |\n")
        for name in benches:
            md = os.path.join(args.run, name, "results.md")
            if os.path.exists(md):
                f.write(f"\n## {name}\n\n")
                f.write("\n".join(open(md).read().splitlines()[1:]).strip() + "\n")


if __name__ == "__main__":
    main()
