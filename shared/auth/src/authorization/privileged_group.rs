//! Upstream's `authorizerfactory.NewPrivilegedGroups`: members of the given groups may do
//! anything. kube-apiserver puts it first, for `system:masters`.

use futures_util::future::BoxFuture;

use super::{Attributes, Authorizer, Decision};
use crate::Result;

#[derive(Clone, Debug)]
pub struct PrivilegedGroups {
    groups: Vec<String>,
}

impl PrivilegedGroups {
    pub fn new(groups: Vec<String>) -> Self {
        PrivilegedGroups { groups }
    }
}

impl Authorizer for PrivilegedGroups {
    fn authorize<'a>(&'a self, attrs: &'a Attributes) -> BoxFuture<'a, Result<(Decision, String)>> {
        let privileged = attrs.user.groups.iter().any(|g| self.groups.contains(g));
        let decision = if privileged {
            Decision::Allow
        } else {
            Decision::NoOpinion
        };
        Box::pin(std::future::ready(Ok((decision, String::new()))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UserInfo;

    fn attrs(groups: &[&str]) -> Attributes {
        Attributes {
            user: UserInfo {
                name: "u".into(),
                groups: groups.iter().map(|g| (*g).to_owned()).collect(),
                ..UserInfo::default()
            },
            ..Attributes::default()
        }
    }

    #[tokio::test]
    async fn members_are_allowed_others_have_no_opinion() {
        let a = PrivilegedGroups::new(vec!["system:masters".into()]);
        let allow = a
            .authorize(&attrs(&["dev", "system:masters"]))
            .await
            .unwrap();
        assert_eq!(allow, (Decision::Allow, String::new()));
        let none = a
            .authorize(&attrs(&["dev", "system:authenticated"]))
            .await
            .unwrap();
        assert_eq!(none, (Decision::NoOpinion, String::new()));
    }
}
