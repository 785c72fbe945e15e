//! Small manifests that several tests feed meshjob.

/// The Job of the Kubernetes documentation, on one line: `perl` with a flow `command`.
pub const PI_JOB: &str = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: pi\nspec:\n  template:\n    spec:\n      containers:\n      - name: pi\n        image: perl\n        command: [\"perl\", \"-e\", \"print 1\"]\n      restartPolicy: Never\n";

/// A Job with a flow `command`.
pub const MIGRATE_JOB: &str = "\
apiVersion: batch/v1
kind: Job
metadata:
  name: migrate
spec:
  template:
    spec:
      containers:
      - name: migrate
        image: registry.example/migrate:1
        command: [\"/migrate\", \"up\"]
      restartPolicy: Never
";

/// A CronJob whose container has `args` and no `command`.
pub const REPORT_CRONJOB: &str = "\
apiVersion: batch/v1
kind: CronJob
metadata:
  name: report
spec:
  schedule: \"0 3 * * *\"
  jobTemplate:
    spec:
      template:
        spec:
          containers:
          - name: report
            image: registry.example/report:2
            args: [\"--daily\"]
          restartPolicy: OnFailure
";

/// A ConfigMap: no pod, passed through.
pub const SETTINGS_CONFIGMAP: &str = "\
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
data:
  mode: fast
";
