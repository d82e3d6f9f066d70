//! How many seats a request occupies, and for how long after it ends (upstream's
//! `request/width.go`, `list_work_estimator.go`, `mutating_work_estimator.go` and
//! `config.go` with its defaults).
//!
//! - A LIST costs one seat per 100 objects it processes, 1 to 10 seats (and no more than
//!   the priority level's max seats): the stored count for a list served from the watch
//!   cache, the count plus the limit when it selects, twice the limit when it pages from
//!   etcd.
//! - A WATCH costs one seat, unless `WatchList` is on and it asks for initial events.
//! - A create, update, patch or delete costs one seat, then holds `ceil(watchers / 10)`
//!   seats for the time it takes to send each interested watcher its event (5 ms of a
//!   seat each).
//! - Anything else costs one seat.

use std::time::Duration;

use crate::fairqueuing::WorkEstimate;
use kas_storage::counts::ObjectCountError;

/// Upstream's `DefaultWorkEstimatorConfig`.
const MINIMUM_SEATS: u64 = 1;
const MAXIMUM_SEATS_LIMIT: u64 = 10;
const OBJECTS_PER_SEAT: f64 = 100.0;
const WATCHES_PER_SEAT: f64 = 10.0;
const EVENT_ADDITIONAL_DURATION: Duration = Duration::from_millis(5);

/// The list options the estimate reads, from the request's query.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ListQuery {
    pub limit: i64,
    pub continue_token: String,
    pub resource_version: String,
    pub resource_version_match: String,
    pub selects: bool,
    pub send_initial_events: Option<bool>,
}

impl ListQuery {
    /// Parses a raw query string as upstream's `Convert_url_Values_To_v1_ListOptions`;
    /// `None` when a value does not convert (upstream then charges the maximum).
    pub fn parse(query: &str) -> Option<ListQuery> {
        let mut out = ListQuery::default();
        // Go's url.Values keeps every value; the conversion reads the first.
        let mut seen = std::collections::HashSet::new();
        for (key, value) in form_urlencoded::parse(query.as_bytes()) {
            if !seen.insert(key.clone()) {
                continue;
            }
            match &*key {
                "limit" => out.limit = value.parse().ok()?,
                "continue" => out.continue_token = value.into_owned(),
                "resourceVersion" => out.resource_version = value.into_owned(),
                "resourceVersionMatch" => out.resource_version_match = value.into_owned(),
                "fieldSelector" | "labelSelector" => out.selects |= !value.is_empty(),
                "sendInitialEvents" => out.send_initial_events = Some(parse_go_bool(&value)?),
                _ => {}
            }
        }
        Some(out)
    }

    /// Upstream's `delegator.ShouldDelegateListMeta` with a cache without snapshots:
    /// whether the list is served by etcd rather than the watch cache.
    fn served_by_storage(&self, consistent_reads_from_cache: bool) -> bool {
        match self.resource_version_match.as_str() {
            "Exact" => true,
            "NotOlderThan" => false,
            "" => {
                if self.limit > 0
                    && !self.resource_version.is_empty()
                    && self.resource_version != "0"
                {
                    return true;
                }
                if !self.continue_token.is_empty() {
                    return true;
                }
                if self.resource_version.is_empty() {
                    return !consistent_reads_from_cache;
                }
                false
            }
            _ => true,
        }
    }
}

fn parse_go_bool(s: &str) -> Option<bool> {
    match s {
        "1" | "t" | "T" | "true" | "TRUE" | "True" => Some(true),
        "0" | "f" | "F" | "false" | "FALSE" | "False" => Some(false),
        _ => None,
    }
}

/// The request as the estimate reads it.
#[derive(Clone, Copy, Debug)]
pub struct WorkRequest<'a> {
    pub verb: &'a str,
    pub resource: &'a str,
    pub subresource: &'a str,
    pub name: &'a str,
    pub api_group: &'a str,
    pub query: &'a str,
}

/// Upstream's `WorkEstimator` with its default configuration.
#[derive(Clone, Debug, Default)]
pub struct WorkEstimator {
    /// The `WatchList` feature gate (off by default in 1.33).
    pub watch_list: bool,
    /// Whether consistent LISTs are served from the watch cache (not with etcd 3.4, which
    /// cannot answer progress requests reliably).
    pub consistent_reads_from_cache: bool,
}

impl WorkEstimator {
    /// The estimate of `req` in a level whose max seats is `max_seats` (0: unknown).
    /// `count` gives the stored objects of a group resource; `watchers` the watches a
    /// mutation of `req` notifies.
    pub fn estimate(
        &self,
        req: &WorkRequest<'_>,
        max_seats: u64,
        count: impl FnOnce(&str) -> Result<i64, ObjectCountError>,
        watchers: impl FnOnce() -> usize,
    ) -> WorkEstimate {
        let max_seats = if max_seats == 0 || max_seats > MAXIMUM_SEATS_LIMIT {
            MAXIMUM_SEATS_LIMIT
        } else {
            max_seats
        };
        match req.verb {
            "list" => self.estimate_list(req, max_seats, count),
            "watch" if self.watch_list => self.estimate_list(req, max_seats, count),
            "create" | "update" | "patch" | "delete" => estimate_mutating(req, max_seats, watchers),
            _ => seats(MINIMUM_SEATS),
        }
    }

    fn estimate_list(
        &self,
        req: &WorkRequest<'_>,
        max_seats: u64,
        count: impl FnOnce(&str) -> Result<i64, ObjectCountError>,
    ) -> WorkEstimate {
        if !req.name.is_empty() {
            return seats(MINIMUM_SEATS);
        }
        let Some(query) = ListQuery::parse(req.query) else {
            return seats(max_seats);
        };
        if req.verb == "watch" && query.send_initial_events != Some(true) {
            return seats(MINIMUM_SEATS);
        }
        let from_cache =
            req.verb == "watch" || !query.served_by_storage(self.consistent_reads_from_cache);
        let stored = match count(&group_resource(req.api_group, req.resource)) {
            Ok(n) => n,
            Err(ObjectCountError::NotFound) => return seats(MINIMUM_SEATS),
            Err(_) => return seats(max_seats),
        };
        let limit = if query.limit > 0 && query.limit < stored {
            query.limit
        } else {
            stored
        };
        let objects = if from_cache {
            stored
        } else if query.selects {
            stored + limit
        } else {
            2 * limit
        };
        let wanted = (objects as f64 / OBJECTS_PER_SEAT).ceil() as u64;
        seats(wanted.clamp(MINIMUM_SEATS, max_seats.max(MINIMUM_SEATS)))
    }
}

fn estimate_mutating(
    req: &WorkRequest<'_>,
    max_seats: u64,
    watchers: impl FnOnce() -> usize,
) -> WorkEstimate {
    // Upstream's isRequestExemptFromWatchEvents.
    if req.resource == "serviceaccounts" && req.subresource == "token" {
        return seats(MINIMUM_SEATS);
    }
    let watch_count = watchers();
    let mut estimate = seats(1);
    if watch_count as f64 >= WATCHES_PER_SEAT {
        let final_seats = (watch_count as f64 / WATCHES_PER_SEAT).ceil() as u64;
        // The work is final_seats × 5 ms of a seat, spread over the seats it may hold.
        let work = EVENT_ADDITIONAL_DURATION.mul_f64(final_seats as f64);
        let held = final_seats.min(max_seats).max(1);
        estimate.final_seats = held;
        estimate.additional_latency = work.div_f64(held as f64);
    }
    estimate
}

/// `GroupResource.String()`, the object counts' key: `<resource>.<group>`, or `<resource>`
/// in the core group.
fn group_resource(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_owned()
    } else {
        format!("{resource}.{group}")
    }
}

fn seats(initial: u64) -> WorkEstimate {
    WorkEstimate {
        initial_seats: initial,
        final_seats: 0,
        additional_latency: Duration::ZERO,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(query: &str) -> WorkRequest<'_> {
        WorkRequest {
            verb: "list",
            resource: "pods",
            subresource: "",
            name: "",
            api_group: "",
            query,
        }
    }

    fn estimate(req: WorkRequest<'_>, count: Result<i64, ObjectCountError>) -> u64 {
        WorkEstimator::default()
            .estimate(&req, 0, |_| count, || 0)
            .initial_seats
    }

    #[test]
    fn lists_cost_by_objects() {
        // Consistent (etcd): twice the limit, which is the count without one.
        assert_eq!(estimate(list(""), Ok(199)), 4);
        assert_eq!(estimate(list("limit=50"), Ok(10_000)), 1);
        assert_eq!(estimate(list("limit=500"), Ok(10_000)), 10);
        // From the cache: the count.
        assert_eq!(estimate(list("resourceVersion=0"), Ok(250)), 3);
        assert_eq!(estimate(list("resourceVersion=0&limit=1"), Ok(250)), 3);
        // Selecting from etcd: count + limit.
        assert_eq!(estimate(list("labelSelector=a%3Db&limit=100"), Ok(200)), 3);
        // Capped at 10 seats.
        assert_eq!(estimate(list(""), Ok(10_000)), 10);
        // Unknown count: the minimum; stale: the maximum; a bad limit: the maximum.
        assert_eq!(estimate(list(""), Err(ObjectCountError::NotFound)), 1);
        assert_eq!(estimate(list(""), Err(ObjectCountError::Stale(5))), 10);
        assert_eq!(estimate(list("limit=x"), Ok(1)), 10);
        // A named list (a field selector on the name) is one seat.
        let named = WorkRequest {
            name: "p",
            ..list("")
        };
        assert_eq!(estimate(named, Ok(10_000)), 1);
    }

    #[test]
    fn level_max_seats_caps_lists() {
        let e = WorkEstimator::default().estimate(&list(""), 3, |_| Ok(10_000), || 0);
        assert_eq!(e.initial_seats, 3);
    }

    #[test]
    fn watches_cost_one_seat_unless_watch_list() {
        let watch = WorkRequest {
            verb: "watch",
            ..list("sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
        };
        assert_eq!(estimate(watch, Ok(10_000)), 1);
        let with_gate = WorkEstimator {
            watch_list: true,
            ..Default::default()
        };
        assert_eq!(
            with_gate
                .estimate(&watch, 0, |_| Ok(1000), || 0)
                .initial_seats,
            10
        );
        let plain = WorkRequest {
            verb: "watch",
            ..list("")
        };
        assert_eq!(
            with_gate
                .estimate(&plain, 0, |_| Ok(1000), || 0)
                .initial_seats,
            1
        );
    }

    #[test]
    fn mutations_hold_seats_for_watchers() {
        let create = WorkRequest {
            verb: "create",
            ..list("")
        };
        let e = WorkEstimator::default().estimate(&create, 0, |_| Ok(0), || 9);
        assert_eq!((e.initial_seats, e.final_seats), (1, 0));
        let e = WorkEstimator::default().estimate(&create, 0, |_| Ok(0), || 25);
        assert_eq!((e.initial_seats, e.final_seats), (1, 3));
        assert_eq!(e.additional_latency, Duration::from_millis(5));
        // More watchers than seats: the latency stretches.
        let e = WorkEstimator::default().estimate(&create, 0, |_| Ok(0), || 1000);
        assert_eq!(e.final_seats, 10);
        assert_eq!(e.additional_latency, Duration::from_millis(50));
        let token = WorkRequest {
            verb: "create",
            resource: "serviceaccounts",
            subresource: "token",
            ..list("")
        };
        let e = WorkEstimator::default().estimate(&token, 0, |_| Ok(0), || 1000);
        assert_eq!(e.final_seats, 0);
        let get = WorkRequest {
            verb: "get",
            ..list("")
        };
        assert_eq!(estimate(get, Ok(10_000)), 1);
    }
}
