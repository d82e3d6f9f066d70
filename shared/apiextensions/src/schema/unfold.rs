//! Upstream `Structural.Unfold` (`unfold.go`): `x-kubernetes-int-or-string` spelled out
//! as the `anyOf` it stands for, as CEL and the OpenAPI publishing see it.

use super::{Generic, NestedValueValidation, Structural};

/// `anyOf: [{type: integer}, {type: string}]`.
fn int_or_string_any_of() -> Vec<NestedValueValidation> {
    ["integer", "string"]
        .into_iter()
        .map(|t| NestedValueValidation {
            forbidden_generics: Generic {
                type_: t.to_owned(),
                ..Generic::default()
            },
            ..NestedValueValidation::default()
        })
        .collect()
}

impl Structural {
    /// Upstream `Unfold`: every `x-kubernetes-int-or-string` schema that does not spell
    /// out the int-or-string `anyOf` (directly, or as its first `allOf`) gets it: as
    /// `anyOf` when there is none, else as a new first `allOf` item.
    pub fn unfold(&mut self) {
        if self.extensions.x_int_or_string {
            let pattern = int_or_string_any_of();
            let vv = &mut self.value_validation;
            let any_of_pattern = vv.any_of == pattern;
            let all_of_pattern = vv
                .all_of
                .first()
                .is_some_and(|a| a.value_validation.any_of == pattern);
            if !any_of_pattern && !all_of_pattern {
                if vv.any_of.is_empty() {
                    vv.any_of = pattern;
                } else {
                    let mut first = NestedValueValidation::default();
                    first.value_validation.any_of = pattern;
                    vv.all_of.insert(0, first);
                }
            }
        }
        if let Some(items) = self.items.as_deref_mut() {
            items.unfold();
        }
        for prop in self.properties.values_mut() {
            prop.unfold();
        }
        if let Some(ap) = self
            .additional_properties
            .as_mut()
            .and_then(|ap| ap.structural.as_deref_mut())
        {
            ap.unfold();
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn int_or_string_becomes_any_of() {
        let mut s = Structural::new(&json!({"properties": {
            "plain": {"x-kubernetes-int-or-string": true},
            "spelled": {"x-kubernetes-int-or-string": true,
                        "anyOf": [{"type": "integer"}, {"type": "string"}]},
            "other": {"x-kubernetes-int-or-string": true, "anyOf": [{"maximum": 3}]},
        }}));
        let spelled = s.properties["spelled"].clone();
        s.unfold();
        assert_eq!(
            s.properties["plain"].value_validation.any_of,
            int_or_string_any_of()
        );
        assert_eq!(s.properties["spelled"], spelled);
        let other = &s.properties["other"].value_validation;
        assert_eq!(other.any_of.len(), 1);
        assert_eq!(
            other.all_of[0].value_validation.any_of,
            int_or_string_any_of()
        );
    }
}
