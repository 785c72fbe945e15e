#!/usr/bin/env python3
"""Writes a cluster dump in the layout `kubectl get pods,nodes,jobs,cronjobs -A -o yaml|json`
writes (one v1 List, keys sorted, YAML sequences at their key's column, JSON indented by four
spaces), for meshjob audit's tests and benchmark.

    bench/audit_dump.py fixture yaml|json > testdata/audit/dump.yaml|json
    bench/audit_dump.py bench yaml|json N > /tmp/dump.yaml   # N pods, a tenth of them held
"""
import json
import re
import sys

import yaml

T0 = "2024-05-01T10:00:00Z"
DONE = "2024-05-01T10:05:00Z"
NOW = "2024-05-01T12:00:00Z"


def meta(name, ns, owner=None, uid=None, labels=None, annotations=None):
    m = {"creationTimestamp": T0, "name": name, "namespace": ns, "resourceVersion": "4242",
         "uid": uid or f"uid-{ns}-{name}"}
    if owner:
        kind, oname, api = owner
        m["ownerReferences"] = [{"apiVersion": api, "blockOwnerDeletion": True,
                                 "controller": True, "kind": kind, "name": oname,
                                 "uid": f"uid-{ns}-{oname}"}]
    if labels:
        m["labels"] = labels
    if annotations:
        m["annotations"] = annotations
    return m


def container(name, image, command=None, env=None):
    c = {"image": image, "imagePullPolicy": "IfNotPresent", "name": name, "resources": {},
         "terminationMessagePath": "/dev/termination-log",
         "terminationMessagePolicy": "File"}
    if command:
        c["command"] = command
    if env:
        c["env"] = [{"name": k, "value": v} for k, v in env.items()]
    return c


def running(name, image):
    return {"containerID": f"containerd://{name}", "image": image, "imageID": image,
            "lastState": {}, "name": name, "ready": True, "restartCount": 0, "started": True,
            "state": {"running": {"startedAt": T0}}}


def ended(name, image, code):
    return {"containerID": f"containerd://{name}", "image": image, "imageID": image,
            "lastState": {}, "name": name, "ready": False, "restartCount": 0,
            "started": False,
            "state": {"terminated": {"containerID": f"containerd://{name}", "exitCode": code,
                                     "finishedAt": DONE,
                                     "reason": "Completed" if code == 0 else "Error",
                                     "startedAt": T0}}}


def pod(name, ns, owner, containers, statuses, phase="Running", restart="Never",
        init=None, init_statuses=None, annotations=None, labels=None):
    spec = {"containers": containers, "dnsPolicy": "ClusterFirst", "nodeName": "node-a",
            "restartPolicy": restart, "schedulerName": "default-scheduler",
            "serviceAccountName": "default", "terminationGracePeriodSeconds": 30}
    if init:
        spec["initContainers"] = init
    status = {"conditions": [{"lastProbeTime": None, "lastTransitionTime": T0,
                              "status": "True", "type": "Ready"}],
              "containerStatuses": statuses, "hostIP": "10.0.0.1", "phase": phase,
              "podIP": "10.1.0.7", "qosClass": "BestEffort", "startTime": T0}
    if init_statuses:
        status["initContainerStatuses"] = init_statuses
    if phase == "Pending":
        status = {"phase": "Pending", "qosClass": "BestEffort"}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(name, ns, owner, labels=labels, annotations=annotations),
            "spec": spec, "status": status}


ISTIO = "docker.io/istio/proxyv2:1.22.3"
LINKERD = "cr.l5d.io/linkerd/proxy:stable-2.14.10"
INJECTED = {"sidecar.istio.io/status": '{"initContainers":["istio-init"],"containers":["istio-proxy"]}'}
SECRET = "s3cr3t-do-not-print<&>"


def istio_held(name, ns, job):
    task = container("report", "registry.example/report:2", ["/bin/report"],
                     {"DB_PASSWORD": SECRET})
    proxy = container("istio-proxy", ISTIO, None, {"ISTIO_META_CLUSTER_ID": "Kubernetes"})
    return pod(name, ns, ("Job", job, "batch/v1"), [task, proxy],
               [ended("report", task["image"], 0), running("istio-proxy", ISTIO)],
               annotations=INJECTED)


def fixture():
    items = []
    ns = "team-a"
    # An Istio classic sidecar Job pod, held under a CronJob.
    items.append(istio_held("nightly-28601234-x7k2p", ns, "nightly-28601234"))
    # The same workload with native sidecars, completed.
    task = container("report", "registry.example/report:2", ["/bin/report"])
    proxy = container("istio-proxy", ISTIO)
    proxy["restartPolicy"] = "Always"
    p = pod("nightly-28601233-q9w8e", ns, ("Job", "nightly-28601233", "batch/v1"), [task],
            [ended("report", task["image"], 0)], phase="Succeeded", init=[proxy],
            init_statuses=[ended("istio-proxy", ISTIO, 0)], annotations=INJECTED)
    items.append(p)
    # A Linkerd pod held after a failed task.
    task = container("migrate", "registry.example/migrate:7", ["/migrate"])
    proxy = container("linkerd-proxy", LINKERD)
    items.append(pod("db-migrate-5tq2z", "payments", ("Job", "db-migrate", "batch/v1"),
                     [proxy, task],
                     [running("linkerd-proxy", LINKERD), ended("migrate", task["image"], 1)],
                     annotations={"linkerd.io/inject": "enabled",
                                  "linkerd.io/proxy-version": "stable-2.14.10"}))
    # An Argo Workflow pod held after `main` and `wait` ended.
    wf = ("Workflow", "etl-6hh2k", "argoproj.io/v1alpha1")
    exe = "quay.io/argoproj/argoexec:v3.5.8"
    c = [container("wait", exe, ["argoexec", "wait"]),
         container("main", "registry.example/etl:1", ["/argo/var/run/argo/argoexec", "emissary"]),
         container("istio-proxy", ISTIO)]
    items.append(pod("etl-6hh2k-extract-1234", "argo", wf, c,
                     [running("istio-proxy", ISTIO), ended("main", "registry.example/etl:1", 0),
                      ended("wait", exe, 0)], annotations=INJECTED))
    # Argo 4.1's init-less layout: `supervisor` waits instead of `wait`.
    wf2 = ("Workflow", "etl-9pp3m", "argoproj.io/v1alpha1")
    c = [container("supervisor", exe, ["argoexec", "supervisor"]),
         container("main", "registry.example/etl:1", ["/var/run/argo/argoexec", "emissary"]),
         container("istio-proxy", ISTIO)]
    items.append(pod("etl-9pp3m-load-5678", "argo", wf2, c,
                     [running("istio-proxy", ISTIO), ended("main", "registry.example/etl:1", 2),
                      ended("supervisor", exe, 0)], annotations=INJECTED))
    # A pod held by cloud-sql-proxy.
    sql = "gcr.io/cloud-sql-connectors/cloud-sql-proxy:2.11.0"
    c = [container("export", "registry.example/export:3", ["/export"]),
         container("sql", sql, ["/cloud-sql-proxy", "proj:region:db"])]
    items.append(pod("export-hh2x9", "data", ("Job", "export", "batch/v1"), c,
                     [ended("export", "registry.example/export:3", 0), running("sql", sql)]))
    # A wrapped pod whose proxy still runs.
    wrapped = ["/bin/sh", "-c", "# meshjob-wrapper v3: command=1\n...", "meshjob"]
    c = [container("sync", "registry.example/sync:1", wrapped),
         container("istio-proxy", ISTIO)]
    items.append(pod("sync-29aa1", ns, ("Job", "sync", "batch/v1"), c,
                     [running("istio-proxy", ISTIO), ended("sync", "registry.example/sync:1", 0)],
                     annotations=INJECTED))
    # Pods held by injected agents other than a mesh proxy: Vault Agent, Dapr, Consul.
    for name, job, ns2, agent, image, anns in [
        ("secrets-sync-8kq2w", "secrets-sync", "vault-apps", "vault-agent",
         "hashicorp/vault:1.20.4", {"vault.hashicorp.com/agent-inject": "true",
                                    "vault.hashicorp.com/agent-inject-status": "injected"}),
        ("publisher-4xv7n", "publisher", "dapr-apps", "daprd", "ghcr.io/dapr/daprd:1.17.13",
         {"dapr.io/enabled": "true", "dapr.io/app-id": "publisher"}),
        ("job-client-2mm8d", "job-client", "default", "consul-dataplane",
         "hashicorp/consul-dataplane:1.9.9",
         {"consul.hashicorp.com/connect-inject": "true",
          "consul.hashicorp.com/connect-inject-status": "injected"}),
    ]:
        task = container("task", "registry.example/task:1", ["/task"])
        c = [task, container(agent, image)]
        items.append(pod(name, ns2, ("Job", job, "batch/v1"), c,
                         [ended("task", task["image"], 0), running(agent, image)],
                         annotations=anns))
    # Left out: Pending, Succeeded, a Deployment's pod.
    c = [container("report", "registry.example/report:2", ["/bin/report"])]
    p = pod("nightly-28601235-pend1", ns, ("Job", "nightly-28601235", "batch/v1"), c, [],
            phase="Pending")
    p["metadata"]["creationTimestamp"] = NOW
    items.append(p)
    web = [container("web", "registry.example/web:1"), container("istio-proxy", ISTIO)]
    items.append(pod("web-7f9c-abcde", ns, ("ReplicaSet", "web-7f9c", "apps/v1"), web,
                     [running("web", "registry.example/web:1"), running("istio-proxy", ISTIO)],
                     restart="Always", annotations=INJECTED))
    # Owners and nodes.
    items.append({"apiVersion": "batch/v1", "kind": "Job",
                  "metadata": meta("nightly-28601234", ns, ("CronJob", "nightly", "batch/v1")),
                  "spec": {"backoffLimit": 6, "completions": 1, "parallelism": 1},
                  "status": {"active": 1, "startTime": T0}})
    items.append({"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("nightly", ns),
                  "spec": {"schedule": "0 3 * * *", "suspend": False},
                  "status": {"lastScheduleTime": T0}})
    for n, v in [("node-a", "v1.33.1"), ("node-b", "v1.29.4")]:
        items.append({"apiVersion": "v1", "kind": "Node",
                      "metadata": {"creationTimestamp": T0, "name": n, "uid": f"uid-{n}"},
                      "spec": {},
                      "status": {"nodeInfo": {"kubeletVersion": v,
                                              "containerRuntimeVersion": "containerd://1.7.13"}}})
    return items


def bench(n):
    for i in range(n):
        if i % 10 == 0:
            yield istio_held(f"job-{i}-abcde", f"ns-{i % 50}", f"job-{i}")
        else:
            task = container("task", "registry.example/task:1", ["/task"], {"TOKEN": SECRET})
            proxy = container("istio-proxy", ISTIO, None,
                              {"ISTIO_META_CLUSTER_ID": "Kubernetes"})
            yield pod(f"job-{i}-abcde", f"ns-{i % 50}", ("Job", f"job-{i}", "batch/v1"),
                      [task, proxy], [ended("task", task["image"], 0),
                                      ended("istio-proxy", ISTIO, 0)],
                      phase="Succeeded", annotations=INJECTED)


def go_json(text):
    """Go's encoding/json escapes <, > and & in strings (only strings hold them here)."""
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def write(items, fmt, out):
    if fmt == "json":
        doc = {"apiVersion": "v1", "items": items, "kind": "List",
               "metadata": {"resourceVersion": ""}}
        out.write(go_json(json.dumps(doc, indent=4, sort_keys=True, ensure_ascii=False)) + "\n")
        return
    out.write("apiVersion: v1\nitems:\n")
    for it in items:
        text = yaml.safe_dump([it], sort_keys=True, default_flow_style=False, width=10**6)
        # go-yaml v2 double-quotes a string that would read as another type (a time, a
        # number), and single-quotes one that needs quotes for its characters.
        out.write(re.sub(r"'([^'\"\\]*)'$", r'"\1"', text, flags=re.M))
    out.write('kind: List\nmetadata:\n  resourceVersion: ""\n')


def write_stream(items, fmt, out):
    """Writes items one at a time, for dumps too big to hold."""
    if fmt == "json":
        out.write('{\n    "apiVersion": "v1",\n    "items": [\n')
        first = True
        for it in items:
            text = go_json(json.dumps(it, indent=4, sort_keys=True, ensure_ascii=False))
            body = "\n".join("        " + line for line in text.split("\n"))
            out.write(("" if first else ",\n") + body)
            first = False
        out.write('\n    ],\n    "kind": "List",\n    "metadata": {\n        "resourceVersion": ""\n    }\n}\n')
        return
    write(items, fmt, out)


if __name__ == "__main__":
    what, fmt = sys.argv[1], sys.argv[2]
    if what == "fixture":
        write(fixture(), fmt, sys.stdout)
    else:
        write_stream(bench(int(sys.argv[3])), fmt, sys.stdout)
