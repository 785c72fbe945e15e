#!/usr/bin/env python3
"""Generate the benchmark inputs for bench/run.sh.

Usage: bench/gen.py OUTDIR

Every input is built from documents of the repository's own testdata, so the benchmark
edits the same shapes the golden tests check. The output is deterministic: the same
testdata always gives byte-identical files.

Written to OUTDIR:
  cron-1000.yaml, cron-2000.yaml, cron-20000.yaml  N CronJobs (every document is edited)
  mixed-100000.yaml  100,000 documents: every 20th a CronJob (5%), the rest ConfigMaps and
                     Deployments in turn
  nonjob.yaml        about 50 MB of ConfigMaps and Deployments only (nothing to edit)
  nonjob-30mb.yaml   the same, about 30 MB: under meshjob's 32 MiB input cap
  small/             1,000 files of one document each, a CronJob and a ConfigMap in turn
  manifest.tsv       file, documents, bytes: one line a file (small/ as a whole)

Only the standard library is used; no YAML parser is needed since the templates are edited
as text (only the metadata.name line changes).
"""

import glob
import os
import re
import sys

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CRON_TEMPLATE = os.path.join(REPO, "testdata", "jobs", "cronjob-block-style-command", "input.yaml")

# Used only when no testdata input has a suitable document of that kind.
FALLBACK_CONFIGMAP = """apiVersion: v1
kind: ConfigMap
metadata:
  name: app-config
data:
  key: value
"""
FALLBACK_DEPLOYMENT = """apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  template:
    spec:
      containers:
      - name: web
        image: nginx
        command: ["nginx"]
"""

NONJOB_BYTES = 50_000_000
NONJOB_SMALL_BYTES = 30_000_000
SMALL_FILES = 1000


def split_documents(text):
    """Split a YAML stream on `---` lines; returns the non-empty documents, each ending in a
    newline. Good enough for testdata (no `---` inside block scalars there)."""
    docs, current = [], []
    for line in text.splitlines(keepends=True):
        if re.match(r"^---\s*$", line):
            docs.append("".join(current))
            current = []
        else:
            current.append(line)
    docs.append("".join(current))
    out = []
    for d in docs:
        if d.strip():
            out.append(d if d.endswith("\n") else d + "\n")
    return out


def top_level(doc, key):
    """The value of a top-level `key: value` line of a document, unquoted, or None."""
    m = re.search(r"^%s:[ \t]*(.*?)[ \t]*$" % re.escape(key), doc, re.M)
    return m.group(1).strip("\"'") if m else None


def plain_doc(doc, api_version, kind):
    """True for a document of that apiVersion and kind that meshjob leaves alone: no tabs, no
    CRs, no anchors, and (for ConfigMaps) not an Istio mesh ConfigMap."""
    if top_level(doc, "apiVersion") != api_version or top_level(doc, "kind") != kind:
        return False
    if "\t" in doc or "\r" in doc or re.search(r"[&*]\w", doc):
        return False
    if kind == "ConfigMap" and (re.search(r"^\s+mesh:", doc, re.M) or "istio" in doc):
        return False
    return metadata_name_line(doc) is not None


def metadata_name_line(doc):
    """The match of the `  name:` line directly under the top-level `metadata:`, or None."""
    m = re.search(r"^metadata:\n((?:[ ]{2,}.*\n|#.*\n)*?)([ ]{2}name:[ \t]*.*)$", doc, re.M)
    return m if m else None


def find_template(api_version, kind, fallback):
    """The first plain document of that kind in the golden inputs,
    testdata/{jobs,mesh}/*/input.yaml (sorted by path), with the file it came from; the
    inline fallback when there is none."""
    golden = [os.path.join(REPO, "testdata", g, "*", "input.yaml") for g in ("jobs", "mesh")]
    for path in sorted(p for g in golden for p in glob.glob(g)):
        with open(path, encoding="utf-8") as f:
            for doc in split_documents(f.read()):
                if plain_doc(doc, api_version, kind):
                    return doc, os.path.relpath(path, REPO)
    return fallback, "inline fallback in bench/gen.py"


def renamer(doc):
    """A function of one string giving the document with metadata.name set to it."""
    m = metadata_name_line(doc)
    if m is None:
        raise SystemExit("gen.py: no metadata.name line in template:\n" + doc)
    head, tail = doc[: m.start(2)], doc[m.end(2):]
    return lambda name: "%s  name: %s%s" % (head, name, tail)


def base_name(doc):
    """The template's own metadata.name, unquoted."""
    return metadata_name_line(doc).group(2).split(":", 1)[1].strip().strip("\"'")


class Kind:
    """One template: makes numbered copies of it, `<name>-00001` and so on."""

    def __init__(self, doc):
        self.make = renamer(doc)
        self.base = base_name(doc)

    def copy(self, i):
        return self.make("%s-%05d" % (self.base, i))


def write_stream(path, docs):
    """Writes documents as one stream separated by `---`; returns (documents, bytes)."""
    count = size = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for doc in docs:
            chunk = doc if count == 0 else "---\n" + doc
            f.write(chunk)
            count += 1
            size += len(chunk.encode("utf-8"))
    return count, size


def nonjob_docs(configmap, deployment, limit):
    """ConfigMaps and Deployments in turn until about `limit` bytes."""
    size, i = 0, 0
    while size < limit:
        i += 1
        doc = configmap.copy(i) if i % 2 else deployment.copy(i)
        size += len(doc) + 4
        yield doc


def main():
    if len(sys.argv) != 2:
        raise SystemExit("usage: gen.py OUTDIR")
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "small"), exist_ok=True)

    with open(CRON_TEMPLATE, encoding="utf-8") as f:
        cron_doc = split_documents(f.read())[0]
    cm_doc, cm_from = find_template("v1", "ConfigMap", FALLBACK_CONFIGMAP)
    dep_doc, dep_from = find_template("apps/v1", "Deployment", FALLBACK_DEPLOYMENT)
    print("gen.py: CronJob from %s" % os.path.relpath(CRON_TEMPLATE, REPO), file=sys.stderr)
    print("gen.py: ConfigMap from %s" % cm_from, file=sys.stderr)
    print("gen.py: Deployment from %s" % dep_from, file=sys.stderr)
    cron, configmap, deployment = Kind(cron_doc), Kind(cm_doc), Kind(dep_doc)

    manifest = []

    def stream(name, docs):
        count, size = write_stream(os.path.join(out, name), docs)
        manifest.append((name, count, size))

    for n in (1000, 2000, 20000):
        stream("cron-%d.yaml" % n, (cron.copy(i) for i in range(1, n + 1)))

    def mixed(n):
        others = 0
        for i in range(1, n + 1):
            if i % 20 == 0:  # 5% CronJobs
                yield cron.copy(i)
            else:
                others += 1
                yield configmap.copy(i) if others % 2 else deployment.copy(i)

    stream("mixed-100000.yaml", mixed(100000))
    stream("nonjob.yaml", nonjob_docs(configmap, deployment, NONJOB_BYTES))
    stream("nonjob-30mb.yaml", nonjob_docs(configmap, deployment, NONJOB_SMALL_BYTES))

    small_bytes = 0
    for i in range(1, SMALL_FILES + 1):
        kind, doc = ("cronjob", cron.copy(i)) if i % 2 else ("configmap", configmap.copy(i))
        _, size = write_stream(os.path.join(out, "small", "%04d-%s.yaml" % (i, kind)), [doc])
        small_bytes += size
    manifest.append(("small", SMALL_FILES, small_bytes))

    with open(os.path.join(out, "manifest.tsv"), "w", encoding="utf-8") as f:
        for name, count, size in manifest:
            f.write("%s\t%d\t%d\n" % (name, count, size))


if __name__ == "__main__":
    main()
