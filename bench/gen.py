#!/usr/bin/env python3
"""Generate the benchmark inputs for bench/run.sh.

Usage: bench/gen.py OUTDIR   (bench/gen.py --help lists the options)

Every input is built from documents of the repository's own testdata, so the benchmark
edits the same shapes the golden tests check. The output is deterministic: the same
testdata always gives byte-identical files.

Written to OUTDIR:
  cron-1000.yaml, cron-2000.yaml, cron-20000.yaml  N CronJobs (every document is edited)
  mixed-100000.yaml  100,000 documents: every 20th a CronJob (5%), the rest ConfigMaps and
                     Deployments in turn
  rendered-100000.yaml  100,000 documents as a chart renders them: every 50th a CronJob (2%),
                     the rest Services and Deployments in turn (about 59 MB)
  rendered-500000.yaml  the same stream five times over: 500,000 documents (about 295 MB)
  nonjob.yaml        about 50 MB of ConfigMaps and Deployments only (nothing to edit)
  nonjob-30mb.yaml   the same, about 30 MB: under meshjob's 32 MiB input cap
  small/             1,000 files of one document each, a CronJob and a ConfigMap in turn
  tree/              10,000 files of one document each in 100 directories: a CronJob, a
                     ConfigMap, a Service and a Deployment in turn
  manifest.tsv       file, documents, bytes, largest document: one line a file (small/ and
                     tree/ as a whole)

Usage: bench/gen.py --stream BYTES
  Writes to stdout, without a file, at least BYTES of the rendered stream (a block of 1,000
  of its documents, repeated); first prints to stderr "documents<TAB>bytes<TAB>largest
  document" of what it is going to write.

Usage: bench/gen.py --jobs BYTES
  The same, with a stream of CronJobs only (every document is edited): the input of
  bench/check.sh.

Only the standard library is used; no YAML parser is needed since the templates are edited
as text (only the metadata.name line changes).
"""

import argparse
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

# What a rendered chart holds besides Jobs, with the `# Source:` comments Helm writes. Both
# kinds share the chart's metadata and selector labels.
RENDERED_SELECTOR = """app.kubernetes.io/name: web
app.kubernetes.io/instance: platform
"""


def indented(text, spaces):
    """`text` with every line indented by `spaces` spaces."""
    return "".join(" " * spaces + line for line in text.splitlines(keepends=True))


def rendered(template, api_version, kind, chart_label):
    """A rendered document: its `# Source:` line, head and chart metadata, then `body`."""
    return (
        "# Source: platform/charts/web/templates/%s.yaml\n" % template
        + "apiVersion: %s\nkind: %s\n" % (api_version, kind)
        + "metadata:\n  name: web\n  namespace: platform\n  labels:\n"
        + indented(RENDERED_SELECTOR, 4)
        + "    app.kubernetes.io/managed-by: Helm\n"
        + ("    helm.sh/chart: web-0.3.1\n" if chart_label else "")
    )


RENDERED_SERVICE = rendered("service", "v1", "Service", False) + (
    """spec:
  type: ClusterIP
  ports:
    - port: 80
      targetPort: http
      protocol: TCP
      name: http
  selector:
"""
    + indented(RENDERED_SELECTOR, 4)
)
RENDERED_DEPLOYMENT = rendered("deployment", "apps/v1", "Deployment", True) + (
    """spec:
  replicas: 2
  selector:
    matchLabels:
"""
    + indented(RENDERED_SELECTOR, 6)
    + """  template:
    metadata:
      labels:
"""
    + indented(RENDERED_SELECTOR, 8)
    + """    spec:
      containers:
        - name: web
          image: "registry.example.com/platform/web:1.4.2"
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
"""
)

NONJOB_BYTES = 50_000_000
NONJOB_SMALL_BYTES = 30_000_000
SMALL_FILES = 1000
TREE_DIRS, TREE_FILES_PER_DIR = 100, 100
RENDERED_DOCS = 100_000
STREAM_BLOCK_DOCS = 1000


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
    count, size, _ = write_stream_sized(path, docs)
    return count, size


def write_stream_sized(path, docs):
    """write_stream, also returning the bytes of the largest document (its `---` line
    included)."""
    count = size = largest = 0
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for doc in docs:
            chunk = doc if count == 0 else "---\n" + doc
            f.write(chunk)
            count += 1
            n = len(chunk.encode("utf-8"))
            size += n
            largest = max(largest, n)
    return count, size, largest


def rendered_docs(cron, service, deployment, n, start=1):
    """The rendered stream: every 50th document a CronJob (2%), the rest Services and
    Deployments in turn."""
    others = 0
    for i in range(start, start + n):
        if i % 50 == 0:
            yield cron.copy(i)
        else:
            others += 1
            yield service.copy(i) if others % 2 else deployment.copy(i)


def stream_to_stdout(limit, cron, service, deployment, jobs_only=False):
    """Writes about `limit` bytes of the rendered stream (`jobs_only`: of CronJobs only) to
    stdout: one block of documents, repeated (names repeat from block to block, which meshjob
    does not mind), so that the generator costs little CPU beside the program it feeds."""

    def docs():
        if jobs_only:
            return (cron.copy(i) for i in range(1, STREAM_BLOCK_DOCS + 1))
        return rendered_docs(cron, service, deployment, STREAM_BLOCK_DOCS)

    block = "".join("---\n" + d for d in docs()).encode("utf-8")
    largest = max(len(("---\n" + d).encode("utf-8")) for d in docs())
    blocks = max(1, -(-limit // len(block)))
    # Said first: the reader may stop before the end, and the caller still wants the figures.
    print(
        "%d\t%d\t%d" % (blocks * STREAM_BLOCK_DOCS, blocks * len(block), largest),
        file=sys.stderr,
        flush=True,
    )
    out = sys.stdout.buffer
    try:
        for _ in range(blocks):
            out.write(block)
        out.flush()
    except BrokenPipeError:
        # The reader stopped early; its exit status tells why.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        raise SystemExit(1)


def nonjob_docs(configmap, deployment, limit):
    """ConfigMaps and Deployments in turn until about `limit` bytes."""
    size, i = 0, 0
    while size < limit:
        i += 1
        doc = configmap.copy(i) if i % 2 else deployment.copy(i)
        size += len(doc) + 4
        yield doc


def parse_args(argv):
    """The command line: OUTDIR, or --stream BYTES."""
    ap = argparse.ArgumentParser(
        prog="bench/gen.py",
        description="Generate the benchmark inputs of bench/run.sh from the repository's "
        "testdata (deterministic: the same testdata gives byte-identical files).",
        epilog="Written to OUTDIR: cron-1000.yaml, cron-2000.yaml, cron-20000.yaml, "
        "mixed-100000.yaml, rendered-100000.yaml, nonjob.yaml, nonjob-30mb.yaml, small/, "
        "tree/ and manifest.tsv (file, documents, bytes, largest document); the module "
        "docstring describes each.",
    )
    ap.add_argument("outdir", nargs="?", metavar="OUTDIR", help="folder to write the inputs to")
    ap.add_argument(
        "--stream",
        type=int,
        metavar="BYTES",
        help="write at least BYTES of the rendered stream to stdout instead (no OUTDIR); "
        "first print 'documents<TAB>bytes<TAB>largest document' to stderr",
    )
    ap.add_argument(
        "--jobs",
        type=int,
        metavar="BYTES",
        help="the same as --stream, with CronJobs only (every document is edited)",
    )
    args = ap.parse_args(argv)
    given = [a for a in (args.stream, args.jobs, args.outdir) if a is not None]
    if len(given) != 1:
        ap.error("give one of OUTDIR, --stream BYTES and --jobs BYTES")
    if (args.stream or 0) < 0 or (args.jobs or 0) < 0:
        ap.error("BYTES must not be negative")
    return args


def main():
    args = parse_args(sys.argv[1:])
    if args.stream is not None or args.jobs is not None:
        with open(CRON_TEMPLATE, encoding="utf-8") as f:
            cron = Kind(split_documents(f.read())[0])
        jobs = args.jobs is not None
        limit = args.jobs if jobs else args.stream
        service, deployment = Kind(RENDERED_SERVICE), Kind(RENDERED_DEPLOYMENT)
        stream_to_stdout(limit, cron, service, deployment, jobs_only=jobs)
        return
    out = args.outdir
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
        count, size, largest = write_stream_sized(os.path.join(out, name), docs)
        manifest.append((name, count, size, largest))

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
    service, rendered_deployment = Kind(RENDERED_SERVICE), Kind(RENDERED_DEPLOYMENT)
    stream(
        "rendered-100000.yaml",
        rendered_docs(cron, service, rendered_deployment, RENDERED_DOCS),
    )
    stream(
        "rendered-500000.yaml",
        rendered_docs(cron, service, rendered_deployment, 5 * RENDERED_DOCS),
    )
    stream("nonjob.yaml", nonjob_docs(configmap, deployment, NONJOB_BYTES))
    stream("nonjob-30mb.yaml", nonjob_docs(configmap, deployment, NONJOB_SMALL_BYTES))

    small_bytes = small_largest = 0
    for i in range(1, SMALL_FILES + 1):
        kind, doc = ("cronjob", cron.copy(i)) if i % 2 else ("configmap", configmap.copy(i))
        _, size = write_stream(os.path.join(out, "small", "%04d-%s.yaml" % (i, kind)), [doc])
        small_bytes += size
        small_largest = max(small_largest, size)
    manifest.append(("small", SMALL_FILES, small_bytes, small_largest))

    tree_bytes = tree_largest = 0
    tree_kinds = [
        ("cronjob", cron),
        ("configmap", configmap),
        ("service", service),
        ("deployment", rendered_deployment),
    ]
    for d in range(TREE_DIRS):
        sub = os.path.join(out, "tree", "team-%02d" % d, "manifests")
        os.makedirs(sub, exist_ok=True)
        for j in range(TREE_FILES_PER_DIR):
            i = d * TREE_FILES_PER_DIR + j + 1
            kind, k = tree_kinds[i % len(tree_kinds)]
            _, size = write_stream(os.path.join(sub, "%03d-%s.yaml" % (j, kind)), [k.copy(i)])
            tree_bytes += size
            tree_largest = max(tree_largest, size)
    manifest.append(("tree", TREE_DIRS * TREE_FILES_PER_DIR, tree_bytes, tree_largest))

    with open(os.path.join(out, "manifest.tsv"), "w", encoding="utf-8") as f:
        for name, count, size, largest in manifest:
            f.write("%s\t%d\t%d\t%d\n" % (name, count, size, largest))


if __name__ == "__main__":
    main()
