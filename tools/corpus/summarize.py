"""Regenerate the vector index in testdata/vectors/CORPUS.md from the corpus files.

The index sits between the markers <!-- index:start --> and <!-- index:end -->;
everything else in CORPUS.md is hand-written and left untouched.
Usage: python3 tools/corpus/summarize.py   (from anywhere; standard library only)
"""
import glob
import json
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
V = os.path.join(ROOT, "testdata", "vectors")
MANIFEST = os.path.join(ROOT, "tools", "corpus", "corpus-dirs.txt")  # written by build-corpus.sh
START, END = "<!-- index:start -->", "<!-- index:end -->"


def java_result(d):
    e = d["expect"]
    if "error" in e:
        s = "rejects: `" + e["error"].split(":")[0] + "`"
        if "lenient_expect" in d:
            s += f"; lenient: v{d['lenient_expect']['read_as_version']} prefix"
        return s
    if d["kind"] in ("subscription", "assignment"):
        s = f"v{e['version']}"
        if e["read_as_version"] != e["version"]:
            s += f" read as v{e['read_as_version']}"
        failing = [str(r["reader_version"]) for r in d["readers"] if not r["ok"]]
        if failing:
            s += "; fails at reader " + ",".join(failing)
        return s
    if d["kind"] == "sticky_user_data":
        return f"sticky {e['format']}, generation {json.dumps(e['generation'])}"
    return f"generation {json.dumps(e['generation'])}"


def index():
    lines = []
    dirs = sorted(line.strip() for line in open(MANIFEST) if line.strip())
    total = 0
    for d in dirs:
        files = sorted(glob.glob(os.path.join(V, d, "*.json")))
        total += len(files)
        lines.append(f"\n### `{d}/` ({len(files)} vectors)\n")
        lines.append("| vector | kind | bytes | canonical | Java 3.9.1 reader |")
        lines.append("|---|---|---|---|---|")
        for f in files:
            v = json.load(open(f))
            lines.append(f"| `{v['name']}` | {v['kind']} | {len(v['hex']) // 2} | {'yes' if v['canonical'] else 'no'} | {java_result(v)} |")
    return f"{total} vectors in {len(dirs)} directories.\n" + "\n".join(lines) + "\n"


def main():
    path = os.path.join(V, "CORPUS.md")
    text = open(path).read()
    a, b = text.index(START), text.index(END)
    text = text[: a + len(START)] + "\n" + index() + text[b:]
    with open(path, "w") as f:
        f.write(text)
    print("CORPUS.md index regenerated")


if __name__ == "__main__":
    main()
