#!/usr/bin/env python3
"""A ruamel.yaml peer of `meshjob fix -`, for bench/run.sh.

Usage: ruamel_fix.py < in.yaml > out.yaml

What a careful hand-written script would do: a comment-preserving round trip of the YAML
stream that, in every batch Job and CronJob, rewrites each container that has a `command`:

  command: ["/bin/sh", "-c", <wrapper script>, "meshjob"]
  args:    <old command> + <old args>

and sets the pod template annotation proxy.istio.io/config (holdApplicationUntilProxyStarts,
terminationDrainDuration, proxyMetadata.EXIT_ON_ZERO_ACTIVE_CONNECTIONS). The wrapper script
is meshjob's own, read from the golden output of testdata/jobs/cronjob-block-style-command, so both tools
write the same bytes' worth of script and the same data for the benchmark's CronJobs.

It does less than meshjob: no findings, no opt-out or native-sidecar checks, no mesh config,
no `kind: List`, no check that the output parses again.
"""

import os
import sys

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import LiteralScalarString

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GOLDEN = os.path.join(REPO, "testdata", "jobs", "cronjob-block-style-command", "expected.yaml")

ANNOTATION = "proxy.istio.io/config"
PROXY_CONFIG = (
    "holdApplicationUntilProxyStarts: true\n"
    "terminationDrainDuration: 5s\n"
    "proxyMetadata:\n"
    '  EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"\n'
)


def new_yaml():
    """A round-trip (comment and quote preserving) YAML with Kubernetes' usual layout."""
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.width = 4096  # never fold long lines
    yaml.indent(mapping=2, sequence=2, offset=0)  # `containers:` then `- name:` below it
    yaml.explicit_start = False
    return yaml


def wrapper_script():
    """meshjob's wrapper script: the third `command` item of the golden CronJob output."""
    with open(GOLDEN, encoding="utf-8") as f:
        doc = YAML(typ="safe").load(f)
    container = doc["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]
    return container["command"][2]


def pod_template(doc):
    """The pod template of a batch Job or CronJob, or None for any other document."""
    if not isinstance(doc, dict):
        return None
    api, kind = str(doc.get("apiVersion", "")), doc.get("kind")
    if not api.startswith("batch/"):
        return None
    try:
        if kind == "Job":
            return doc["spec"]["template"]
        if kind == "CronJob":
            return doc["spec"]["jobTemplate"]["spec"]["template"]
    except (KeyError, TypeError):
        pass
    return None


def set_annotation(template):
    """Sets proxy.istio.io/config on the pod template, adding metadata first if needed."""
    meta = template.get("metadata")
    if meta is None:
        meta = CommentedMap()
        template.insert(0, "metadata", meta)  # before `spec`, as meshjob writes it
    annotations = meta.get("annotations")
    if annotations is None:
        annotations = CommentedMap()
        meta["annotations"] = annotations
    annotations[ANNOTATION] = LiteralScalarString(PROXY_CONFIG)


def wrap_container(container, script):
    """Moves command (+ args) into args and puts the wrapper in command. Returns whether the
    container changed (one without a command, or already wrapped, is left alone)."""
    command = container.get("command")
    if not command or (len(command) > 3 and command[3] == "meshjob"):
        return False
    argv = CommentedSeq(list(command) + list(container.get("args") or []))
    wrapped = CommentedSeq(["/bin/sh", "-c", LiteralScalarString(script), "meshjob"])
    container["command"] = wrapped
    if "args" in container:
        container["args"] = argv
    else:
        # Right after `command`, where meshjob puts it.
        container.insert(list(container.keys()).index("command") + 1, "args", argv)
    return True


def fix(doc, script):
    """Rewrites one document in place."""
    template = pod_template(doc)
    if template is None:
        return
    spec = template.get("spec") or {}
    changed = False
    for container in spec.get("containers") or []:
        changed |= wrap_container(container, script)
    if changed:
        set_annotation(template)


def main():
    script = wrapper_script()
    yaml = new_yaml()
    docs = list(yaml.load_all(sys.stdin))
    for doc in docs:
        fix(doc, script)
    yaml.dump_all(docs, sys.stdout)


if __name__ == "__main__":
    main()
