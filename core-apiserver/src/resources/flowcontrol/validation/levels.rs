//! Upstream's `ValidatePriorityLevelConfigurationSpec` for v1 requests, with its
//! queuing checks (shuffle sharding's `RequiredEntropyBits`).

use kas_apimachinery::validation::field::{self, Path};
use serde_json::Value;

use super::super::{int, present, s};

const MAX_QUEUES: i64 = 10_000_000;
const MAX_HASH_BITS: i64 = 60;

/// Upstream `ValidatePriorityLevelConfigurationSpec`.
pub fn priority_level_spec(name: &str, spec: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let ty = s(spec, "/type");
    if (name == "exempt") != (ty == "Exempt") {
        let msg = "type must be 'Exempt' if and only if name is 'exempt'";
        errs.push(field::invalid(&path.child("type"), ty, msg));
    }
    match ty {
        "Exempt" => {
            if present(spec, "/limited").is_some() {
                let msg = "must be nil if the type is not Limited";
                errs.push(field::forbidden(&path.child("limited"), msg));
            }
            if let Some(exempt) = present(spec, "/exempt") {
                let p = path.child("exempt");
                non_negative(exempt, &p, &mut errs);
                lendable(exempt, &p, &mut errs);
            }
        }
        "Limited" => {
            if present(spec, "/exempt").is_some() {
                let msg = "must be nil if the type is Limited";
                errs.push(field::forbidden(&path.child("exempt"), msg));
            }
            match present(spec, "/limited") {
                None => {
                    let msg = "must not be empty when type is Limited";
                    errs.push(field::required(&path.child("limited"), msg));
                }
                Some(limited) => errs.extend(limited_spec(limited, &path.child("limited"))),
            }
        }
        _ => {
            let p = path.child("type");
            errs.push(field::not_supported(&p, ty, &["Exempt", "Limited"]));
        }
    }
    errs
}

fn non_negative(v: &Value, path: &Path, errs: &mut Vec<field::Error>) {
    let shares = present(v, "/nominalConcurrencyShares").and_then(Value::as_i64);
    if let Some(shares) = shares.filter(|s| *s < 0) {
        let p = path.child("nominalConcurrencyShares");
        errs.push(field::invalid(&p, shares, "must be a non-negative integer"));
    }
}

fn lendable(v: &Value, path: &Path, errs: &mut Vec<field::Error>) {
    let percent = present(v, "/lendablePercent").and_then(Value::as_i64);
    if let Some(percent) = percent.filter(|p| !(0..=100).contains(p)) {
        let p = path.child("lendablePercent");
        errs.push(field::invalid(
            &p,
            percent,
            "must be between 0 and 100, inclusive",
        ));
    }
}

fn limited_spec(limited: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    non_negative(limited, path, &mut errs);
    let lr = limited.get("limitResponse").unwrap_or(&Value::Null);
    let p = path.child("limitResponse");
    match s(lr, "/type") {
        "Reject" => {
            if present(lr, "/queuing").is_some() {
                let msg = "must be nil if limited.limitResponse.type is not Limited";
                errs.push(field::forbidden(&p.child("queuing"), msg));
            }
        }
        "Queue" => match present(lr, "/queuing") {
            None => {
                let msg = "must not be empty if limited.limitResponse.type is Limited";
                errs.push(field::required(&p.child("queuing"), msg));
            }
            Some(q) => errs.extend(queuing(q, &p.child("queuing"))),
        },
        other => {
            let valid = ["Queue", "Reject"];
            errs.push(field::not_supported(&p.child("type"), other, &valid));
        }
    }
    lendable(limited, path, &mut errs);
    let borrowing = present(limited, "/borrowingLimitPercent").and_then(Value::as_i64);
    if let Some(b) = borrowing.filter(|b| *b < 0) {
        let msg = "if specified, must be a non-negative integer";
        errs.push(field::invalid(&path.child("borrowingLimitPercent"), b, msg));
    }
    errs
}

/// Upstream `ValidatePriorityLevelQueuingConfiguration`, with shuffle sharding's
/// `RequiredEntropyBits`.
fn queuing(q: &Value, path: &Path) -> Vec<field::Error> {
    let mut errs = Vec::new();
    let limit = int(q, "/queueLengthLimit");
    if limit <= 0 {
        let p = path.child("queueLengthLimit");
        errs.push(field::invalid(&p, limit, "must be positive"));
    }
    let queues = int(q, "/queues");
    if queues <= 0 {
        errs.push(field::invalid(
            &path.child("queues"),
            queues,
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        let msg = format!("must not be greater than {MAX_QUEUES}");
        errs.push(field::invalid(&path.child("queues"), queues, &msg));
    }
    let hand = int(q, "/handSize");
    let p = path.child("handSize");
    if hand <= 0 {
        errs.push(field::invalid(&p, hand, "must be positive"));
    } else if hand > queues {
        let msg = format!("should not be greater than queues ({queues})");
        errs.push(field::invalid(&p, hand, &msg));
    } else {
        let entropy = (hand as f64 * (queues as f64).log2()).ceil() as i64;
        if entropy > MAX_HASH_BITS {
            let msg = format!(
                "required entropy bits of deckSize {queues} and handSize {hand} should not be greater than {MAX_HASH_BITS}"
            );
            errs.push(field::invalid(&p, hand, &msg));
        }
    }
    errs
}
