"""A published CRD (YAML on stdin) as compact JSON on stdout, without its descriptions.

Every `description` whose value is a string is removed (the OpenAPI keyword, which does not
take part in validation); a property named `description` (a mapping) is kept. Scalars are
read as Kubernetes reads YAML (sigs.k8s.io/yaml, YAML 1.2 booleans): only `true` and `false`
are booleans and nothing is a timestamp. The documents are written one per line, in order.
"""

import json
import re
import sys

import yaml


class Loader(yaml.SafeLoader):
    pass


Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag not in (
        "tag:yaml.org,2002:bool", "tag:yaml.org,2002:timestamp")]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
Loader.add_implicit_resolver(
    "tag:yaml.org,2002:bool", re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"))


def strip(node):
    if isinstance(node, dict):
        return {k: strip(v) for k, v in node.items()
                if not (k == "description" and isinstance(v, str))}
    if isinstance(node, list):
        return [strip(v) for v in node]
    return node


for doc in yaml.load_all(sys.stdin, Loader=Loader):
    if doc is not None:
        print(json.dumps(strip(doc), separators=(",", ":"), ensure_ascii=False))
