//! The proxy endpoints a pod's wrapper calls: the quit URL and the readiness URL, moved where
//! the pod's annotation moves its mesh's port.

use super::own_fixes::{self, QuitPort};
use super::script::{self, Endpoint};
use crate::mesh::{Mesh, Support};
use crate::pod::Pod;
use std::rc::Rc;

/// An endpoint of the proxy for one pod: `url`, moved to the port the pod's settings (or the
/// mesh-wide one read into `support`: [`own_fixes::quit_port`]) give it
/// when `url` is on the mesh's default quit port (Linkerd's admin port serves both
/// `/shutdown` and `/ready`; Istio's ready port is another one and stays). Port `0` turns
/// that server off: the mesh's defaults then go to the server that stays (Istio: Envoy's
/// admin server), or the pod is refused; an explicit URL stays as it is.
pub(super) fn pod_endpoint(
    mesh: &Mesh,
    url: Option<&Endpoint>,
    pod: &Pod<'_>,
    support: &Support,
) -> Result<Endpoint, String> {
    let (quit, ready) = (mesh_url(mesh.default_quit_url), mesh_url(mesh.ready_url));
    let quit = quit.as_ref().as_ref().map_err(Clone::clone)?;
    let ready = ready.as_ref().as_ref().map_err(Clone::clone)?;
    let mut q = url.unwrap_or(quit).clone();
    let moved = own_fixes::quit_port(mesh, pod, support);
    if let Some(m) = moved.as_ref().filter(|m| m.port == 0)
        && (q == *quit || q == *ready)
    {
        return port_off(mesh, pod, m, q == *ready);
    }
    if let Some(p) = moved.map(|m| m.port)
        && q.port == quit.port
        && (q == *quit || q == *ready)
    {
        q.port = p;
    }
    Ok(q)
}

/// One of the mesh table's URLs, parsed: the same few for every pod of a run, so each
/// thread keeps them parsed (shared, so that two can be held at once).
fn mesh_url(url: &'static str) -> Rc<Result<Endpoint, String>> {
    type Parsed = crate::memo::Recent<&'static str, Rc<Result<Endpoint, String>>, 4>;
    thread_local! {
        static PARSED: std::cell::RefCell<Parsed> =
            const { std::cell::RefCell::new(crate::memo::Recent::new()) };
    }
    PARSED.with_borrow_mut(|parsed| {
        let parse = || (url, Rc::new(script::parse_quit_url(url)));
        Rc::clone(parsed.find_or(|u| *u == url, parse))
    })
}

/// The quit (or, `ready`, readiness) endpoint of a pod whose quit port is `0` (`off` says
/// what sets it).
fn port_off(
    mesh: &Mesh,
    pod: &Pod<'_>,
    off_by: &QuitPort,
    ready: bool,
) -> Result<Endpoint, String> {
    let from = zero(&off_by.from);
    let Some(off) = &mesh.port_off else {
        return Err(format!(
            "{from} turns the {} proxy's admin server off, so nothing in the pod \
             can stop the proxy when the task ends; set a port, or pass --quit-url",
            mesh.name
        ));
    };
    let config = pod
        .annotation(mesh.pod_config_annotation)
        .unwrap_or_default();
    if let Some(k) = off.moved_by.iter().find(|k| config.contains(*k)) {
        return Err(format!(
            "{from} turns the status server off, so the wrapper would stop the \
             proxy through {}, but the pod's {} sets `{k}`, which moves it; pass --quit-url",
            off.served_by, mesh.pod_config_annotation
        ));
    }
    script::parse_quit_url(if ready { off.ready_url } else { off.quit_url })
}

/// What sets a pod's quit port to `0`, as a finding says it.
fn zero(from: &own_fixes::PortFrom) -> String {
    use own_fixes::PortFrom;
    match from {
        PortFrom::Annotation(key, None) => format!("`{key}: \"0\"`"),
        PortFrom::Annotation(key, Some(ns)) => {
            format!("`{key}: \"0\"` (from Namespace/{ns})")
        }
        PortFrom::PodConfig(annotation, key) => format!("`{key}: 0` in {annotation}"),
        PortFrom::Injected(key) => format!("`{key}: 0` in the injected proxy's PROXY_CONFIG"),
        PortFrom::Mesh(origin) => format!("the mesh-wide port 0 ({origin})"),
    }
}
