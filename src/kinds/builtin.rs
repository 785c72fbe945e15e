//! The built-in rows of the kinds table, one per kind, each with the source of its facts
//! (repository@commit and file). Adding a kind is adding a row here, with tests and a row
//! of the table in docs/changes.md.

use super::{
    Each, Fallback, Fixes, KindRow, Layers, Pattern, RestartAt, RestartPolicy, RowOrigin, Shape,
    When, Wrapper,
};

/// A pod template path of a built-in row, with what the row needs beyond the path.
#[derive(Clone, Copy)]
struct Tpl {
    /// Dot path from the object's root; `""` is the object itself.
    path: &'static str,
    shape: Shape,
    optional: bool,
    when: Option<When>,
    layers: Option<Layers>,
    fallback: Option<Fallback>,
}

impl Tpl {
    const fn at(path: &'static str, shape: Shape) -> Tpl {
        Tpl {
            path,
            shape,
            optional: false,
            when: None,
            layers: None,
            fallback: None,
        }
    }

    fn pattern(&self) -> Option<Pattern> {
        let mut p = match self.path {
            "" => Pattern::root(self.shape),
            path => Pattern::parse(path, self.shape).ok()?,
        };
        p.optional = self.optional;
        p.when = self.when;
        p.layers = self.layers;
        p.fallback = self.fallback;
        Some(p)
    }
}

/// A built-in row, written as constants.
struct Builtin {
    group: &'static str,
    versions: &'static [&'static str],
    kind: &'static str,
    templates: &'static [Tpl],
    restart: RestartAt,
    fixes: Fixes,
}

impl Builtin {
    const fn new(
        group: &'static str,
        versions: &'static [&'static str],
        kind: &'static str,
        templates: &'static [Tpl],
    ) -> Builtin {
        Builtin {
            group,
            versions,
            kind,
            templates,
            restart: JOB_RESTART,
            fixes: Fixes::ALL,
        }
    }

    fn row(&self) -> KindRow {
        KindRow {
            group: self.group.to_string(),
            versions: self.versions.iter().map(|v| (*v).to_string()).collect(),
            kind: self.kind.to_string(),
            // The built-in patterns are checked by a test.
            templates: self.templates.iter().filter_map(Tpl::pattern).collect(),
            restart: self.restart,
            fixes: self.fixes,
            origin: RowOrigin::Builtin,
        }
    }
}

/// The built-in rows.
pub(super) fn rows() -> Vec<KindRow> {
    BUILTIN.iter().map(Builtin::row).collect()
}

/// A Job's pods: the Job API takes only `Never` and `OnFailure`, and meshjob reads an unset
/// policy as `Never` (the pod is replaced, so the proxy must stop on failure too). The pods
/// of kinds made of Jobs (JobSet, Trainer runtimes) and of kinds the config adds read the
/// same.
pub(super) const JOB_RESTART: RestartAt = RestartAt {
    beside_template: false,
    default: RestartPolicy::Never,
};

/// Pods whose `restartPolicy` defaults to Kubernetes' own `Always`, which is not batch: a
/// bare Pod, and a Volcano task, whose controller never sets it (volcano-sh/volcano@
/// ed72c7c815a9: no `RestartPolicy` written under `pkg/controllers/job`).
const POD_RESTART: RestartAt = RestartAt {
    beside_template: false,
    default: RestartPolicy::Always,
};

/// A Kubeflow v1 replica spec: `restartPolicy` beside `template` (`Always`, `OnFailure`,
/// `Never` or `ExitCode`, which makes the pod `Never`) overrides the template's own.
/// kubeflow/trainer@4445c12aa62e (v1.9.4) `pkg/apis/kubeflow.org/v1/common_types.go`
/// (`ReplicaSpec`), `pkg/controller.v1/tensorflow/util.go` and `mpi/mpijob_controller.go`
/// (`setRestartPolicy`); the defaults are each kind's `<Kind>DefaultRestartPolicy` in
/// `pkg/apis/kubeflow.org/v1/*_types.go`.
const fn kubeflow(default: RestartPolicy) -> RestartAt {
    RestartAt {
        beside_template: true,
        default,
    }
}

const TEMPLATE: Shape = Shape::Template;

/// Why an Argo template's pods never get the wrapper.
/// Argo 4.1's opt-in init-less layout, whose `supervisor` container takes over from `init`
/// and `wait` (argo-workflows@f016ad89eb26 `docs/initless-pod.md`), uploads late the same way.
const ARGO_NO_WRAPPER: &str = "Argo's `wait` container uploads the outputs and logs after the \
    main container has ended, through the proxy a wrapper would have stopped \
    (argo-workflows#12919)";

/// Where Argo puts pod metadata, under a WorkflowSpec at `spec` (Workflow, WorkflowTemplate,
/// ClusterWorkflowTemplate) or `spec.workflowSpec` (CronWorkflow). argoproj/argo-workflows@
/// f016ad89eb26:
/// - `pkg/apis/workflow/v1alpha1/workflow_types.go`: `WorkflowSpec.podMetadata`,
///   `templateDefaults` (a whole Template), `artifactGC` (`podMetadata` for the ArtifactGC
///   pods), `Template.metadata`; `cron_workflow_types.go`: `CronWorkflowSpec.workflowSpec`.
/// - `workflow/controller/workflowpod.go` `addMetadata`: the pod gets `podMetadata`, then
///   the template's metadata, key by key; `operator.go` `mergedTemplateDefaultsInto`:
///   `templateDefaults` is merged under each template first (strategic merge).
/// - `workflow/controller/artifact_gc.go` `updateArtifactGCPodInfo`: ArtifactGC pods get
///   `artifactGC.podMetadata` only, and no kill command.
/// - `workflow/signal/signal.go` `killCommand` and `workflow/common/common.go`
///   `AnnotationKeyKillCmd`: the pod annotation `workflows.argoproj.io/kill-cmd-<container>`
///   (a JSON argv) replaces the command the controller runs in a container still running
///   once every main container has ended, or one has failed (`operator.go`
///   `podHasContainerNeedingTermination`); docs/sidecar-injection.md documents it for
///   istio-proxy and linkerd-proxy.
/// - Templates that run pods: `container`, `script`, `containerSet`, `resource`, `data`
///   (`http` and `plugin` run in the agent pod; `steps`, `dag` and `suspend` run none).
const fn argo(spec: &'static str, artifact_gc: &'static str) -> [Tpl; 2] {
    [
        Tpl {
            layers: Some(Layers {
                common: &[&["templateDefaults", "metadata"]],
                each: Each {
                    list: "templates",
                    name: "name",
                    metadata: "metadata",
                    runs_pod: &["container", "script", "containerSet", "resource", "data"],
                },
            }),
            fallback: Some(Fallback::KillCommand {
                prefix: "workflows.argoproj.io/kill-cmd-",
            }),
            ..Tpl::at(
                spec,
                Shape::MetadataIn {
                    key: "podMetadata",
                    before: "templates",
                },
            )
        },
        Tpl {
            optional: true,
            ..Tpl::at(
                artifact_gc,
                Shape::MetadataIn {
                    key: "podMetadata",
                    before: "",
                },
            )
        },
    ]
}

const ARGO_WORKFLOW: [Tpl; 2] = argo("spec", "spec.artifactGC");
const ARGO_CRON: [Tpl; 2] = argo("spec.workflowSpec", "spec.workflowSpec.artifactGC");
const ARGO_VERSIONS: &[&str] = &["v1alpha1"];
const ARGO: Builtin = Builtin {
    fixes: Fixes::native_only(ARGO_NO_WRAPPER),
    ..Builtin::new("argoproj.io", ARGO_VERSIONS, "", &ARGO_WORKFLOW)
};

/// A Kubeflow Training Operator v1 kind: `spec.<key>.<role>.template`, a map of replica
/// specs (kubeflow/trainer@4445c12aa62e `pkg/apis/kubeflow.org/v1/*_types.go`, the
/// `json` tags of `TFReplicaSpecs`, `PyTorchReplicaSpecs`, `MPIReplicaSpecs`,
/// `XGBReplicaSpecs`, `PaddleReplicaSpecs`, `JAXReplicaSpecs`; replica status is counted
/// from pod phases, `pkg/controller.v1/common/pod.go`).
const fn kubeflow_v1(
    kind: &'static str,
    templates: &'static [Tpl],
    default: RestartPolicy,
) -> Builtin {
    Builtin {
        restart: kubeflow(default),
        ..Builtin::new("kubeflow.org", &["v1"], kind, templates)
    }
}

/// Why Spark pods never get the wrapper.
const SPARK_NO_WRAPPER: &str = "spark-submit writes the driver's and the executors' commands";

/// A RayJob's submitter pod: only in `K8sJobMode`, the default (`HTTPMode`,
/// `InteractiveMode` and `SidecarMode` have no submitter pod; SidecarMode refuses a
/// `submitterPodTemplate`). ray-project/kuberay@feeaf72facab
/// `ray-operator/apis/ray/v1/rayjob_types.go` (`SubmissionMode`, default `K8sJobMode`;
/// v1alpha1 has no `submissionMode`), `controllers/ray/utils/validation.go`.
const RAY_SUBMITTER_MODE: When = When {
    path: &["spec", "submissionMode"],
    default: "K8sJobMode",
    values: &["K8sJobMode"],
};

/// KubeRay writes the submitter's command when its first container has none
/// (kuberay@feeaf72facab `controllers/ray/rayjob_controller.go` `configureSubmitterContainer`,
/// on `Containers[RayContainerIndex]`, index 0).
const RAY_COMMAND: Wrapper = Wrapper::WhenFirstCommand(
    "KubeRay writes the submitter's command when its first container has none",
);

/// The built-in kinds.
const BUILTIN: &[Builtin] = &[
    // batch/v1 Job (`spec.template`) and CronJob (`spec.jobTemplate.spec.template`), from the
    // Kubernetes API reference; `batch/v1beta1` and `batch/v2alpha1` CronJobs have the same
    // fields.
    Builtin::new("batch", &[], "Job", &[Tpl::at("spec.template", TEMPLATE)]),
    Builtin::new(
        "batch",
        &[],
        "CronJob",
        &[Tpl::at("spec.jobTemplate.spec.template", TEMPLATE)],
    ),
    // A bare Pod is its own template. Its `restartPolicy` defaults to `Always` (Kubernetes
    // `PodSpec`), which is not batch; `Never` and `OnFailure` pods are, such as Helm test
    // hooks (`helm.sh/hook: test`; helm/helm@e9b85e4de16a
    // `pkg/cmd/testdata/output/template-set.txt`). An Airflow `pod_template_file` (a Pod
    // with a `base` container) is fixed like any batch Pod: the KubernetesPodOperator copes
    // with an injected istio-proxy (it judges the `base` container and deletes the pod;
    // apache/airflow@00820978bf5d `providers/cncf/kubernetes/.../operators/pod.py`
    // `is_istio_enabled`, `cleanup`), but the same file is the KubernetesExecutor's worker
    // template (`pod_template_file_examples/`, docs/executor/kubernetes.rst), whose watcher
    // waits for the pod phase (`executors/kubernetes_executor_utils.py` `process_status`)
    // and hangs; meshjob cannot tell the two apart, and the fix is harmless to the first.
    Builtin {
        restart: POD_RESTART,
        ..Builtin::new("", &["v1"], "Pod", &[Tpl::at("", TEMPLATE)])
    },
    // KEDA ScaledJob: `spec.jobTargetRef` is a whole `batchv1.JobSpec`
    // (kedacore/keda@8b4f083ca8c8 `apis/keda/v1alpha1/scaledjob_types.go`,
    // `ScaledJobSpec.JobTargetRef`); each Job KEDA makes takes it whole, its pod template's
    // `restartPolicy` set to `OnFailure` when none is written
    // (`pkg/scaling/executor/scale_jobs.go` `generateJobs`).
    Builtin {
        restart: RestartAt {
            beside_template: false,
            default: RestartPolicy::OnFailure,
        },
        ..Builtin::new(
            "keda.sh",
            &["v1alpha1"],
            "ScaledJob",
            &[Tpl::at("spec.jobTargetRef.template", TEMPLATE)],
        )
    },
    // Kubeflow Training Operator v1; PyTorchJob and PaddleJob replicas default to
    // `OnFailure`, the others to `Never` (see `kubeflow_v1`).
    kubeflow_v1(
        "TFJob",
        &[Tpl::at("spec.tfReplicaSpecs.*.template", TEMPLATE)],
        RestartPolicy::Never,
    ),
    kubeflow_v1(
        "PyTorchJob",
        &[Tpl::at("spec.pytorchReplicaSpecs.*.template", TEMPLATE)],
        RestartPolicy::OnFailure,
    ),
    kubeflow_v1(
        "MPIJob",
        &[Tpl::at("spec.mpiReplicaSpecs.*.template", TEMPLATE)],
        RestartPolicy::Never,
    ),
    kubeflow_v1(
        "XGBoostJob",
        &[Tpl::at("spec.xgbReplicaSpecs.*.template", TEMPLATE)],
        RestartPolicy::Never,
    ),
    kubeflow_v1(
        "PaddleJob",
        &[Tpl::at("spec.paddleReplicaSpecs.*.template", TEMPLATE)],
        RestartPolicy::OnFailure,
    ),
    kubeflow_v1(
        "JAXJob",
        &[Tpl::at("spec.jaxReplicaSpecs.*.template", TEMPLATE)],
        RestartPolicy::Never,
    ),
    // Kubeflow Trainer v2 runtimes: a JobSetSpec at `spec.template.spec`
    // (kubeflow/trainer@8c0f5059bd51 `pkg/apis/trainer/v1alpha1/trainingruntime_types.go`:
    // `Template JobSetTemplateSpec`, whose `Spec` is a `jobsetv1alpha2.JobSetSpec`).
    Builtin::new(
        "trainer.kubeflow.org",
        &["v1alpha1"],
        "TrainingRuntime",
        &[Tpl::at(
            "spec.template.spec.replicatedJobs[*].template.spec.template",
            TEMPLATE,
        )],
    ),
    Builtin::new(
        "trainer.kubeflow.org",
        &["v1alpha1"],
        "ClusterTrainingRuntime",
        &[Tpl::at(
            "spec.template.spec.replicatedJobs[*].template.spec.template",
            TEMPLATE,
        )],
    ),
    // JobSet: each replicated job is a `batchv1.JobTemplateSpec`
    // (kubernetes-sigs/jobset@08dfbdfd6827 `api/jobset/v1alpha2/jobset_types.go`:
    // `ReplicatedJobs []ReplicatedJob`, `ReplicatedJob.Template`).
    Builtin::new(
        "jobset.x-k8s.io",
        &["v1alpha2"],
        "JobSet",
        &[Tpl::at(
            "spec.replicatedJobs[*].template.spec.template",
            TEMPLATE,
        )],
    ),
    // Volcano: `JobSpec.Tasks[].Template` (a PodTemplateSpec), the CronJob's
    // `spec.jobTemplate.spec`, and flow.volcano.sh's JobTemplate whose `spec` is a
    // `JobSpec` (volcano-sh/apis@536f121f5365 `pkg/apis/batch/v1alpha1/job.go`,
    // `pkg/apis/flow/v1alpha1/jobtemplate_types.go`). Task status comes from pod phases
    // (volcano-sh/volcano@ed72c7c815a9 `pkg/controllers/job/job_controller_actions.go`).
    Builtin {
        restart: POD_RESTART,
        ..Builtin::new(
            "batch.volcano.sh",
            &["v1alpha1"],
            "Job",
            &[Tpl::at("spec.tasks[*].template", TEMPLATE)],
        )
    },
    Builtin {
        restart: POD_RESTART,
        ..Builtin::new(
            "batch.volcano.sh",
            &["v1alpha1"],
            "CronJob",
            &[Tpl::at("spec.jobTemplate.spec.tasks[*].template", TEMPLATE)],
        )
    },
    Builtin {
        restart: POD_RESTART,
        ..Builtin::new(
            "flow.volcano.sh",
            &["v1alpha1"],
            "JobTemplate",
            &[Tpl::at("spec.tasks[*].template", TEMPLATE)],
        )
    },
    // RayJob: the submitter pod, a K8s Job's template (its `restartPolicy` is `Never` in
    // the one KubeRay writes, `controllers/ray/common/job.go` `GetSubmitterTemplate`). The
    // RayJob ends only when the submitter Job has finished too (`rayjob_controller.go`).
    // The head and worker pods are long-running. `ray.io/v1alpha1` is deprecated but still
    // served (`config/crd/bases/ray.io_rayjobs.yaml`). RayCronJob's `jobTemplate` is a
    // RayJobSpec (`apis/ray/v1/raycronjob_types.go`). Sources: see `RAY_SUBMITTER_MODE`.
    Builtin {
        fixes: Fixes {
            wrapper: RAY_COMMAND,
            native: true,
        },
        ..Builtin::new(
            "ray.io",
            &["v1", "v1alpha1"],
            "RayJob",
            &[Tpl {
                when: Some(RAY_SUBMITTER_MODE),
                ..Tpl::at("spec.submitterPodTemplate", TEMPLATE)
            }],
        )
    },
    Builtin {
        fixes: Fixes {
            wrapper: RAY_COMMAND,
            native: true,
        },
        ..Builtin::new(
            "ray.io",
            &["v1"],
            "RayCronJob",
            &[Tpl {
                when: Some(When {
                    path: &["spec", "jobTemplate", "submissionMode"],
                    ..RAY_SUBMITTER_MODE
                }),
                ..Tpl::at("spec.jobTemplate.submitterPodTemplate", TEMPLATE)
            }],
        )
    },
    // SparkApplication: `spec.driver` and `spec.executor` are SparkPodSpecs whose
    // `annotations` and `labels` go to the pods (kubeflow/spark-operator@38082f3318e9
    // `api/v1beta2/sparkapplication_types.go`); ScheduledSparkApplication has a
    // SparkApplicationSpec at `spec.template` (`scheduledsparkapplication_types.go`). The
    // operator already takes a `Running` driver pod whose driver container has ended as
    // completed (`pkg/util/sparkapplication.go` `GetDriverState`), but the pod keeps its
    // proxy, and its node's resources, until it is deleted.
    Builtin {
        fixes: Fixes::native_only(SPARK_NO_WRAPPER),
        ..Builtin::new(
            "sparkoperator.k8s.io",
            &["v1beta2"],
            "SparkApplication",
            &[
                Tpl::at("spec.driver", Shape::Metadata),
                Tpl::at("spec.executor", Shape::Metadata),
            ],
        )
    },
    Builtin {
        fixes: Fixes::native_only(SPARK_NO_WRAPPER),
        ..Builtin::new(
            "sparkoperator.k8s.io",
            &["v1beta2"],
            "ScheduledSparkApplication",
            &[
                Tpl::at("spec.template.driver", Shape::Metadata),
                Tpl::at("spec.template.executor", Shape::Metadata),
            ],
        )
    },
    // Argo Workflows: see `argo`.
    Builtin {
        kind: "Workflow",
        ..ARGO
    },
    Builtin {
        kind: "WorkflowTemplate",
        ..ARGO
    },
    Builtin {
        kind: "ClusterWorkflowTemplate",
        ..ARGO
    },
    Builtin {
        kind: "CronWorkflow",
        templates: &ARGO_CRON,
        ..ARGO
    },
    // Katib: `trialTemplate.trialSpec` is an unstructured object of any kind
    // (kubeflow/katib@33c8ff4e5d18 `pkg/apis/controller/experiments/v1beta1/experiment_types.go`),
    // decided as its own kind. With the StdOut (default), File and TfEvent metrics
    // collectors, Katib's pod webhook keeps a leading `sh -c` of the primary container and
    // joins everything after it into one string (`pkg/webhook/v1beta1/pod/utils.go`
    // `wrapWorkerContainer`), which folds a wrapper's arguments into its script.
    Builtin {
        fixes: Fixes::native_only(
            "Katib's metrics collector joins the primary container's command and args into \
             one `sh -c` string, which folds a wrapper's arguments into its script",
        ),
        ..Builtin::new(
            "kubeflow.org",
            &["v1beta1"],
            "Experiment",
            &[Tpl::at("spec.trialTemplate.trialSpec", Shape::Object)],
        )
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtin_patterns_parse() {
        for b in BUILTIN {
            for t in b.templates {
                assert!(t.pattern().is_some(), "{}", t.path);
            }
            assert!(!b.kind.is_empty() && !b.templates.is_empty());
        }
        let rows = rows();
        assert_eq!(rows.len(), BUILTIN.len());
        for (i, a) in rows.iter().enumerate() {
            assert_eq!(a.templates.len(), BUILTIN[i].templates.len(), "{}", a.kind);
            for b in &rows[..i] {
                let same = a.group == b.group && a.kind == b.kind;
                assert!(!same, "{}/{} twice", a.group, a.kind);
            }
        }
    }
}
