//! Label and field selectors of list, watch and deletecollection, turned into a storage
//! predicate. Fields a resource does not index are refused as upstream refuses them.

use kas_apimachinery::{Status, fields, labels};
use kas_storage::Predicate;

use kas_registry::error::Result;
use kas_registry::rest::options::ListOptions;
use kas_registry::store::Store;

pub fn predicate(store: &Store, opts: &ListOptions) -> Result<Predicate> {
    let label = if opts.label_selector.is_empty() {
        None
    } else {
        Some(
            labels::parse(&opts.label_selector)
                .map_err(|e| Status::bad_request(&format!("unable to parse requirement: {e}")))?,
        )
    };
    let field = if opts.field_selector.is_empty() {
        None
    } else {
        let selector = fields::parse_selector(&opts.field_selector)
            .map_err(|e| Status::bad_request(&format!("invalid field selector: {e}")))?;
        Some(selector)
    };
    if label.is_none() && field.is_none() {
        return Ok(Predicate::everything());
    }
    if let Some(field) = &field {
        // Refuse fields the resource cannot select on, as upstream's field label
        // conversion (the kind's own function, or the default one) does.
        let known = store.strategy.field_set(&serde_json::json!({}));
        for requirement in field.requirements() {
            if known.contains_key(&requirement.field) {
                continue;
            }
            let message = if store.strategy.field_label_conversion() {
                format!("field label not supported: {}", requirement.field)
            } else {
                format!(
                    "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                    kas_apimachinery::golang::strconv::quote(&requirement.field)
                )
            };
            return Err(Status::bad_request(&message).into());
        }
    }
    let recorded = field.clone();
    let predicate = Predicate::new(store.attrs(), move |attrs| {
        label.as_ref().is_none_or(|l| l.matches(&attrs.labels))
            && field.as_ref().is_none_or(|f| f.matches(&attrs.fields))
    });
    // The watch cache narrows watches and lists by it (a kubelet's `spec.nodeName=`).
    Ok(match recorded {
        Some(field) => predicate.with_field_selector(field),
        None => predicate,
    })
}
