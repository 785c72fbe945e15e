//! Configuration: `.meshjob.yaml`, the KRM functionConfig and the effective settings.

use std::collections::BTreeMap;

/// The effective settings of one run: defaults, then the config file, then flags.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    /// URL the wrapper POSTs when the task ends.
    pub quit_url: String,
    /// `terminationDrainDuration` to set (a Go duration, already validated).
    pub drain_duration: String,
    /// Set `proxyMetadata.EXIT_ON_ZERO_ACTIVE_CONNECTIONS: "true"`.
    pub exit_on_zero_active_connections: bool,
    /// Set `holdApplicationUntilProxyStarts: true`.
    pub hold_application_until_proxy_starts: bool,
    /// Image reference or prefix -> the image's entrypoint argv, for containers without
    /// `command`. The longest matching prefix wins.
    pub entrypoints: BTreeMap<String, Vec<String>>,
    /// Seconds the wrapper waits for the proxy to be ready before starting the task; `None`
    /// (the default) does not wait.
    pub wait_for_proxy_seconds: Option<u32>,
    /// Overwrite user values that contradict the tool's instead of warning.
    pub force: bool,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            quit_url: crate::istio::DEFAULT_QUIT_URL.to_string(),
            drain_duration: crate::istio::DEFAULT_DRAIN_DURATION.to_string(),
            exit_on_zero_active_connections: true,
            hold_application_until_proxy_starts: true,
            entrypoints: BTreeMap::new(),
            wait_for_proxy_seconds: None,
            force: false,
        }
    }
}

impl Settings {
    /// The entrypoint argv configured for `image`: an exact reference match first, then the
    /// longest prefix.
    pub fn entrypoint_for(&self, image: &str) -> Option<&[String]> {
        if let Some(argv) = self.entrypoints.get(image) {
            return Some(argv);
        }
        self.entrypoints
            .iter()
            .filter(|(prefix, _)| image.starts_with(prefix.as_str()))
            .max_by_key(|(prefix, _)| prefix.len())
            .map(|(_, argv)| argv.as_slice())
    }
}
