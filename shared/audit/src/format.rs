//! Upstream's one-line text of an event (`k8s.io/apiserver/pkg/audit/format.go`,
//! `EventString`): the `legacy` log format, and the lines `HandlePluginError` logs.

use kas_apimachinery::golang::strconv::quote;
use kas_apimachinery::golang::time::{Time, ZERO_UNIX, format_rfc3339_nano, parse_rfc3339};

use crate::event::Event;

/// Upstream's `EventString`:
/// `<received> AUDIT: id="..." stage="..." ip="..." method="..." user="..." groups="..."
/// as="..." asgroups="..." user-agent="..." namespace="..." uri="..." response="..."`.
///
/// The timestamp is RFC 3339 with the fraction's trailing zeros cut, in UTC (upstream
/// prints the server's local zone, UTC in the usual container) and to the microsecond the
/// event keeps (upstream's in-memory event still has nanoseconds).
pub fn event_string(ev: &Event) -> String {
    let (username, groups) = if ev.user.username.is_empty() {
        ("<none>", "<none>".to_owned())
    } else if ev.user.groups.is_empty() {
        (ev.user.username.as_str(), "<none>".to_owned())
    } else {
        (ev.user.username.as_str(), quoted_list(&ev.user.groups))
    };
    // Upstream writes `<lookup>` for groups only when the impersonated user's are nil; the
    // impersonation filter always sets them, so a list (even empty) is written here.
    let (as_user, as_groups) = match &ev.impersonated_user {
        Some(u) => (u.username.as_str(), quoted_list(&u.groups)),
        None => ("<self>", "<lookup>".to_owned()),
    };
    let namespace = ev
        .object_ref
        .as_ref()
        .map(|r| r.namespace.as_str())
        .filter(|ns| !ns.is_empty())
        .unwrap_or("<none>");
    let response = ev
        .response_status
        .as_ref()
        .map_or_else(|| "<deferred>".to_owned(), |s| s.code.to_string());
    let ip = ev.source_ips.first().map_or("<unknown>", String::as_str);
    let received = parse_rfc3339(&ev.request_received_timestamp).unwrap_or(Time {
        seconds: ZERO_UNIX,
        nanos: 0,
    });
    format!(
        "{} AUDIT: id={} stage={} ip={} method={} user={} groups={} as={} asgroups={} \
         user-agent={} namespace={} uri={} response=\"{response}\"",
        format_rfc3339_nano(received),
        quote(&ev.audit_id),
        quote(ev.stage.as_str()),
        quote(ip),
        quote(&ev.verb),
        quote(username),
        quote(&groups),
        quote(as_user),
        quote(&as_groups),
        quote(&ev.user_agent),
        quote(namespace),
        quote(&ev.request_uri),
    )
}

/// Upstream's `auditStringSlice`: each element quoted, joined by commas.
fn quoted_list(list: &[String]) -> String {
    list.iter().map(|s| quote(s)).collect::<Vec<_>>().join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ObjectReference, ResponseStatus, Stage, UserInfo};

    fn sample() -> Event {
        let mut ev = Event::new();
        ev.audit_id = "6a7c5a38-0b4c-4b5e-9d61-5b7c0d0f2a11".to_owned();
        ev.stage = Stage::ResponseComplete;
        ev.verb = "create".to_owned();
        ev.request_uri = "/api/v1/namespaces/default/configmaps?fieldManager=kubectl".to_owned();
        ev.user = UserInfo {
            username: "admin".to_owned(),
            groups: vec![
                "system:masters".to_owned(),
                "system:authenticated".to_owned(),
            ],
            ..UserInfo::default()
        };
        ev.source_ips = vec!["10.0.0.1".to_owned(), "10.0.0.2".to_owned()];
        ev.user_agent = "kubectl/v1.33.0 (linux/amd64) \"quoted\"".to_owned();
        ev.object_ref = Some(ObjectReference {
            namespace: "default".to_owned(),
            ..ObjectReference::default()
        });
        ev.response_status = Some(ResponseStatus {
            code: 201,
            ..ResponseStatus::default()
        });
        ev.request_received_timestamp = "2024-01-02T03:04:05.120000Z".to_owned();
        ev
    }

    #[test]
    fn legacy_line_is_upstreams() {
        // What Go's EventString prints for the same event.
        assert_eq!(
            event_string(&sample()),
            r#"2024-01-02T03:04:05.12Z AUDIT: id="6a7c5a38-0b4c-4b5e-9d61-5b7c0d0f2a11" stage="ResponseComplete" ip="10.0.0.1" method="create" user="admin" groups="\"system:masters\",\"system:authenticated\"" as="<self>" asgroups="<lookup>" user-agent="kubectl/v1.33.0 (linux/amd64) \"quoted\"" namespace="default" uri="/api/v1/namespaces/default/configmaps?fieldManager=kubectl" response="201""#
        );
    }

    #[test]
    fn placeholders_for_what_the_event_lacks() {
        let mut ev = Event::new();
        ev.stage = Stage::RequestReceived;
        ev.request_received_timestamp = "2024-01-02T03:04:05.000000Z".to_owned();
        assert_eq!(
            event_string(&ev),
            r#"2024-01-02T03:04:05Z AUDIT: id="" stage="RequestReceived" ip="<unknown>" method="" user="<none>" groups="<none>" as="<self>" asgroups="<lookup>" user-agent="" namespace="<none>" uri="" response="<deferred>""#
        );
        ev.user.username = "bob".to_owned();
        ev.impersonated_user = Some(UserInfo {
            username: "alice".to_owned(),
            groups: vec!["dev".to_owned()],
            ..UserInfo::default()
        });
        ev.request_received_timestamp = String::new();
        let line = event_string(&ev);
        assert!(line.starts_with("0001-01-01T00:00:00Z AUDIT: "), "{line}");
        assert!(
            line.contains(r#"user="bob" groups="<none>" as="alice" asgroups="\"dev\"""#),
            "{line}"
        );
    }
}
