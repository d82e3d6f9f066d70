//! Graceful deletion, after upstream's `rest.BeforeDelete` for a strategy that implements
//! `RESTGracefulDeleteStrategy` (pods): the object is first marked with a
//! `deletionTimestamp` in the future and its grace period; whoever runs it (a kubelet)
//! deletes it with a zero grace period when it is done. A zero grace period deletes at
//! once, after the mark is written, as upstream's `updateForGracefulDeletionAndFinalizers`
//! does.

use std::time::SystemTime;

use kas_apimachinery::golang::time::{Time, format_rfc3339, parse_rfc3339};
use serde_json::{Value, json};

use super::Store;

/// What `BeforeDelete` decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Graceful {
    /// Not a graceful deletion: finalizers and the store's own marking decide.
    No,
    /// A graceful deletion is already under way and the request does not shorten it: the
    /// object is answered as it is.
    Pending,
    /// Mark the object (again, when shortening) with this grace period.
    Mark { period: i64 },
}

impl Store {
    /// Upstream `BeforeDelete`'s graceful half. A negative requested period counts as 1s.
    pub(super) fn graceful(&self, current: &Value, requested: Option<i64>) -> Graceful {
        let requested = requested.map(|p| if p < 0 { 1 } else { p });
        let marked = current
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|t| !t.is_null());
        if marked {
            let period = current
                .pointer("/metadata/deletionGracePeriodSeconds")
                .and_then(Value::as_i64);
            // Marked without a grace period, or an earlier delete that failed after
            // marking: delete now.
            let Some(period) = period.filter(|p| *p != 0) else {
                return Graceful::No;
            };
            return match requested {
                Some(shorter) if shorter < period => Graceful::Mark { period: shorter },
                _ => Graceful::Pending,
            };
        }
        match self.strategy.check_graceful_delete(current, requested) {
            Some(period) => Graceful::Mark { period },
            None => Graceful::No,
        }
    }
}

/// Writes the graceful marks on `obj`: a first mark sets the deletion time `period`
/// seconds from `now` and bumps the generation; shortening an earlier mark moves its
/// deletion time back by the difference, but not into the past: then it is now, and a
/// period that was not zero becomes 1 (someone else still deletes it).
pub(super) fn mark(obj: &mut Value, period: i64, now: SystemTime) {
    let meta = crate::meta::metadata_mut(obj);
    let earlier = meta
        .get("deletionTimestamp")
        .and_then(Value::as_str)
        .and_then(parse_rfc3339);
    let mut period = period;
    let at = match earlier {
        Some(t) => {
            let old = meta
                .get("deletionGracePeriodSeconds")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let at = Time::from_unix(t.seconds - old + period, i64::from(t.nanos));
            let now = Time::from_system_time(now);
            if (at.seconds, at.nanos) < (now.seconds, now.nanos) {
                if period != 0 {
                    period = 1;
                }
                now
            } else {
                at
            }
        }
        None => {
            if let Some(g) = meta
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                meta.insert("generation".into(), json!(g + 1));
            }
            let now = Time::from_system_time(now);
            Time::from_unix(now.seconds + period, 0)
        }
    };
    meta.insert("deletionTimestamp".into(), json!(format_rfc3339(at)));
    meta.insert("deletionGracePeriodSeconds".into(), json!(period));
    meta.remove("resourceVersion");
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};

    #[test]
    fn a_first_mark_is_in_the_future_and_a_shorter_one_moves_it_back() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut pod = json!({"metadata": {"name": "p", "generation": 1, "resourceVersion": "5"}});
        mark(&mut pod, 30, now);
        assert_eq!(pod["metadata"]["deletionTimestamp"], "2001-09-09T01:47:10Z");
        assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 30);
        assert_eq!(pod["metadata"]["generation"], 2);
        assert!(pod["metadata"].get("resourceVersion").is_none());
        mark(&mut pod, 10, now + Duration::from_secs(5));
        assert_eq!(pod["metadata"]["deletionTimestamp"], "2001-09-09T01:46:50Z");
        assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 10);
        assert_eq!(pod["metadata"]["generation"], 2);
        // Shortened past its deadline: now, with a period of 1 unless it was 0.
        mark(&mut pod, 5, now + Duration::from_secs(20));
        assert_eq!(pod["metadata"]["deletionTimestamp"], "2001-09-09T01:47:00Z");
        assert_eq!(pod["metadata"]["deletionGracePeriodSeconds"], 1);
    }
}
