//! Lists by `x-kubernetes-list-type` (upstream `unstructuredSetList`,
//! `unstructuredMapList`), with upstream's `listSets` and `listMaps` cases of
//! `validation_test.go`.

use kas_apimachinery::validation::field::Path;
use serde_json::{Value as Json, json};

use super::{check_rules, errors, object};
use crate::cel::Validator;

fn set_of(items: Json) -> Json {
    json!({ "type": "array", "x-kubernetes-list-type": "set", "items": items })
}

fn map_list(keys: &[&str], props: Json) -> Json {
    json!({ "type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": keys,
        "items": { "type": "object", "properties": props } })
}

fn strings() -> Json {
    json!({ "type": "string" })
}

#[test]
fn upstream_list_sets() {
    let props = json!({ "val1": set_of(strings()), "val2": set_of(strings()) });
    let obj = json!({ "val1": ["a", "b", "c"], "val2": ["a", "c", "b"] });
    check_rules(
        props,
        obj,
        &[
            "self.val1 == ['c', 'b', 'a']",
            "self.val1 == self.val2",
            "'a' in self.val1",
            "self.val2[0] in self.val1",
            "!('x' in self.val1)",
            "self.val1 + self.val2 == ['a', 'b', 'c']",
            "self.val1 + ['c', 'd'] == ['a', 'b', 'c', 'd']",
            "self.val1.join('-') == 'a-b-c'",
            "sets.contains(self.val1, ['b'])",
            "sets.equivalent(self.val1, self.val2)",
        ],
        &[],
    );
}

#[test]
fn a_list_literal_on_the_left_compares_in_order() {
    // cel-go's `==` is the left operand's `Equal`: a literal list is a plain list.
    let props = json!({ "s": set_of(strings()) });
    check_rules(
        props,
        json!({ "s": ["a", "b"] }),
        &[
            "self.s == ['b', 'a']",
            "['b', 'a'] != self.s",
            "['a', 'b'] == self.s",
            "self.s != ['a']",
            "self.s != ['a', 'c']",
        ],
        &[("['b', 'a'] == self.s", "failed rule")],
    );
}

#[test]
fn set_union() {
    let props = json!({ "s": set_of(strings()) });
    check_rules(
        props,
        json!({ "s": ["a", "b"] }),
        &[
            "(self.s + ['x']).size() == 3",
            "(self.s + ['a']).size() == 2",
            "(self.s + ['x', 'b', 'x']).size() == 3",
            "(self.s + ['x', 'b', 'y'])[3] == 'y'",
            // The union is a set still.
            "self.s + ['x'] == ['x', 'b', 'a']",
            // A plain list on the left appends all.
            "(['a'] + self.s).size() == 3",
        ],
        &[("self.s + ['x'] == ['a', 'b']", "failed rule")],
    );
}

#[test]
fn set_elements_compare_as_upstream_decoded_them() {
    // Upstream hashes its own elements as decoded (an integral JSON number is an int64,
    // also in a `number` list) and the other list's as CEL values (a double is a
    // float64): a set of numbers holding an integral value is not equal to itself.
    let props = json!({ "n": set_of(json!({ "type": "number" })) });
    check_rules(
        props.clone(),
        json!({ "n": [1.5, 2.5] }),
        &["self.n == self.n", "self.n == [2.5, 1.5]"],
        &[],
    );
    check_rules(
        props,
        json!({ "n": [1.5, 2] }),
        &[
            "self.n != self.n",
            "self.n != [2.0, 1.5]",
            "self.n.sum() == 3.5",
        ],
        &[],
    );
}

#[test]
fn set_transition_rule_ignores_order() {
    let schema = json!({ "type": "object", "properties": { "spec": {
        "type": "object",
        "x-kubernetes-validations": [{ "rule": "self.s == oldSelf.s", "message": "immutable" }],
        "properties": { "s": set_of(strings()), "l": { "type": "array", "items": strings() } },
    } } });
    let old = json!({ "spec": { "s": ["a", "b"], "l": ["a", "b"] } });
    let reordered = json!({ "spec": { "s": ["b", "a"], "l": ["a", "b"] } });
    assert_eq!(
        errors(&schema, reordered, Some(old.clone())),
        Vec::<String>::new()
    );
    let changed = json!({ "spec": { "s": ["a", "c"], "l": ["a", "b"] } });
    assert_eq!(
        errors(&schema, changed, Some(old.clone())),
        ["root.spec: Invalid value: \"object\": immutable"]
    );
    // A whole object compares its set lists as sets, its atomic lists in order.
    let whole = json!({ "type": "object", "properties": { "spec": {
        "type": "object",
        "x-kubernetes-validations": [{ "rule": "self == oldSelf", "message": "immutable" }],
        "properties": { "s": set_of(strings()), "l": { "type": "array", "items": strings() } },
    } } });
    let reordered = json!({ "spec": { "s": ["b", "a"], "l": ["a", "b"] } });
    assert_eq!(
        errors(&whole, reordered, Some(old.clone())),
        Vec::<String>::new()
    );
    let atomic_reordered = json!({ "spec": { "s": ["a", "b"], "l": ["b", "a"] } });
    assert_eq!(
        errors(&whole, atomic_reordered, Some(old)),
        ["root.spec: Invalid value: \"object\": immutable"]
    );
}

#[test]
fn rules_on_the_list_and_optional_old_self() {
    let schema = json!({ "type": "object", "properties": { "s": {
        "type": "array", "x-kubernetes-list-type": "set", "items": { "type": "integer" },
        "x-kubernetes-validations": [
            { "rule": "self == oldSelf", "message": "same" },
            { "rule": "!oldSelf.hasValue() || oldSelf.value() == self", "optionalOldSelf": true,
              "message": "optional same" },
        ],
    } } });
    let old = json!({ "s": [1, 2, 3] });
    assert_eq!(
        errors(&schema, json!({ "s": [3, 1, 2] }), Some(old.clone())),
        Vec::<String>::new()
    );
    assert_eq!(
        errors(&schema, json!({ "s": [3, 1, 4] }), Some(old)),
        [
            "root.s: Invalid value: \"array\": same",
            "root.s: Invalid value: \"array\": optional same",
        ]
    );
}

#[test]
fn sets_in_comprehensions_and_library_functions() {
    let props = json!({
        "s": set_of(strings()),
        "ints": set_of(json!({ "type": "integer" })),
        "sets": { "type": "array", "items": set_of(strings()) },
    });
    let obj = json!({ "s": ["b", "a"], "ints": [3, 1, 2], "sets": [["a", "b"], ["b", "a"]] });
    check_rules(
        props,
        obj,
        &[
            "self.sets.all(x, x == ['a', 'b'])",
            "self.sets[0] == self.sets[1]",
            "self.sets[0] == self.s",
            "[self.s].exists(x, x == ['a', 'b'])",
            "self.sets.all(i, x, x == self.s)",
            "self.sets.map(x, x + ['c']).all(x, x.size() == 3)",
            "size(self.s) == 2 && self.s.size() == 2",
            "!self.s.isSorted() && self.ints.sum() == 6",
            "self.ints.min() == 1 && self.ints.max() == 3",
            "self.s.indexOf('a') == 1 && self.s.lastIndexOf('b') == 0",
            "self.s.all(x, x in ['a', 'b'])",
            "self.s.exists_one(x, x == 'a')",
            "self.s.filter(x, x != 'a') == ['b']",
            "self.s.map(x, x + '!') == ['b!', 'a!']",
            "sets.contains(['a', 'b', 'c'], self.s) && sets.intersects(self.s, ['a'])",
            "type(self.s) == list",
        ],
        &[("self.s.map(x, x) == ['a', 'b']", "failed rule")],
    );
}

fn kv_list() -> Json {
    map_list(&["k"], json!({ "k": strings(), "v": strings() }))
}

#[test]
fn upstream_list_maps() {
    let props = json!({ "objs": { "type": "array", "items": kv_list() } });
    let obj = json!({ "objs": [
        [{ "k": "a", "v": "1" }, { "k": "b", "v": "2" }],
        [{ "k": "b", "v": "2" }, { "k": "a", "v": "1" }],
        [{ "k": "b", "v": "3" }, { "k": "a", "v": "1" }],
        [{ "k": "c", "v": "4" }],
    ] });
    check_rules(
        props,
        obj,
        &[
            "self.objs[0] == self.objs[1]",
            "self.objs[0] + self.objs[2] == self.objs[2]",
            "self.objs[2] + self.objs[0] == self.objs[0]",
            "self.objs[0] == [self.objs[0][0], self.objs[0][1]]",
            "self.objs[0] == [self.objs[0][1], self.objs[0][0]]",
            "self.objs[2] + [self.objs[0][0], self.objs[0][1]] == self.objs[0]",
            "size(self.objs[0] + [self.objs[3][0]]) == 3",
        ],
        &[("self.objs[0] == self.objs[2]", "failed rule")],
    );
}

#[test]
fn upstream_list_maps_with_unsupported_identity_characters() {
    // Upstream looks the key properties up under their escaped names: `k.` is never
    // found (`k__dot__`), so entries are told apart by `k!` alone.
    let item = json!({ "k!": strings(), "k.": strings() });
    let props = json!({ "objs": { "type": "array", "items": map_list(&["k!", "k."], item) } });
    let obj = json!({ "objs": [
        [{ "k!": "a", "k.": "1" }, { "k!": "b", "k.": "2" }],
        [{ "k!": "b", "k.": "2" }, { "k!": "a", "k.": "1" }],
        [{ "k!": "b", "k.": "2" }, { "k!": "c", "k.": "1" }],
        [{ "k!": "b", "k.": "2" }, { "k!": "a", "k.": "3" }],
    ] });
    check_rules(
        props,
        obj,
        &[
            "self.objs[0] == self.objs[1]",
            "self.objs[0][0].k__dot__ == '1'",
            "self.objs[0] != self.objs[2]",
            "self.objs[0] != self.objs[3]",
        ],
        &[],
    );
}

#[test]
fn map_list_merge_by_key() {
    let props = json!({ "a": kv_list(), "b": kv_list() });
    let obj = json!({
        "a": [{ "k": "x", "v": "1" }, { "k": "y", "v": "2" }],
        "b": [{ "k": "z", "v": "3" }, { "k": "y", "v": "4" }],
    });
    check_rules(
        props,
        obj,
        &[
            // `y` replaced in place, `z` appended.
            "(self.a + self.b).map(e, e.k + e.v) == ['x1', 'y4', 'z3']",
            "(self.b + self.a).map(e, e.k + e.v) == ['z3', 'y2', 'x1']",
            "(self.a + self.b).size() == 3",
            // Entries matched by key, in any order.
            "self.a + self.b == [self.b[0], self.a[0], self.b[1]]",
            "self.a + self.b != [self.b[0], self.a[0], self.a[1]]",
            "self.a.all(e, e.v.size() == 1) && self.a.exists(e, e.k == 'y')",
        ],
        &[],
    );
}

#[test]
fn map_list_keys_of_several_properties() {
    let item = json!({ "name": strings(), "port": { "type": "integer" }, "v": strings() });
    let props = json!({ "p": map_list(&["name", "port"], item) });
    let obj = json!({ "p": [
        { "name": "a", "port": 1, "v": "x" },
        { "name": "a", "port": 2, "v": "y" },
    ] });
    let schema = object(props.clone(), &["self.p == oldSelf.p"]);
    let reordered = json!({ "p": [
        { "name": "a", "port": 2, "v": "y" },
        { "name": "a", "port": 1, "v": "x" },
    ] });
    assert_eq!(
        errors(&schema, reordered, Some(obj.clone())),
        Vec::<String>::new()
    );
    let changed = json!({ "p": [
        { "name": "a", "port": 2, "v": "x" },
        { "name": "a", "port": 1, "v": "y" },
    ] });
    assert_eq!(
        errors(&schema, changed, Some(obj.clone())),
        ["root: Invalid value: \"object\": failed rule: self.p == oldSelf.p"]
    );
    check_rules(props, obj, &["(self.p + [self.p[0]]).size() == 2"], &[]);
}

#[test]
fn crd_schema_through_the_validator() {
    let schema = json!({ "type": "object", "properties": {
        "spec": { "type": "object",
            "x-kubernetes-validations": [
                { "rule": "self.finalizers == oldSelf.finalizers", "message": "finalizers are immutable" },
                { "rule": "self.ports == oldSelf.ports || self.ports.size() > oldSelf.ports.size()",
                  "message": "ports may only grow" },
                { "rule": "(self.finalizers + self.extra).size() <= 3", "message": "too many" },
            ],
            "properties": {
                "finalizers": set_of(strings()),
                "extra": set_of(strings()),
                "ports": map_list(&["port"], json!({
                    "port": { "type": "integer" }, "protocol": strings() })),
            } },
    } });
    let v = Validator::new(&schema);
    let old = json!({ "apiVersion": "g/v1", "kind": "K", "metadata": { "name": "x" }, "spec": {
        "finalizers": ["a", "b"], "extra": ["a"],
        "ports": [{ "port": 80, "protocol": "TCP" }, { "port": 443, "protocol": "TCP" }] } });
    let reordered = json!({ "apiVersion": "g/v1", "kind": "K", "metadata": { "name": "x" }, "spec": {
        "finalizers": ["b", "a"], "extra": ["b", "a"],
        "ports": [{ "port": 443, "protocol": "TCP" }, { "port": 80, "protocol": "TCP" }] } });
    let path = Path::nil();
    assert!(v.validate(&path, &reordered, Some(&old)).is_empty());
    let changed = json!({ "apiVersion": "g/v1", "kind": "K", "metadata": { "name": "x" }, "spec": {
        "finalizers": ["b", "c"], "extra": ["d", "e"],
        "ports": [{ "port": 443, "protocol": "UDP" }, { "port": 80, "protocol": "TCP" }] } });
    let errs: Vec<String> = v
        .validate(&path, &changed, Some(&old))
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errs,
        [
            "spec: Invalid value: \"object\": finalizers are immutable",
            "spec: Invalid value: \"object\": ports may only grow",
            "spec: Invalid value: \"object\": too many",
        ]
    );
}

#[test]
fn sum_of_an_empty_list_is_the_zero_of_its_element_type() {
    let list = |items: Json| json!({ "type": "array", "items": items });
    let props = json!({
        "emptyInts": list(json!({ "type": "integer" })),
        "emptyDoubles": list(json!({ "type": "number" })),
        "emptyDurations": list(json!({ "type": "string", "format": "duration" })),
    });
    let obj = json!({ "emptyInts": [], "emptyDoubles": [], "emptyDurations": [] });
    check_rules(
        props,
        obj,
        &[
            "self.emptyInts.sum() == 0 && type(self.emptyInts.sum()) == int",
            "self.emptyDoubles.sum() == 0.0 && type(self.emptyDoubles.sum()) == double",
            "self.emptyDoubles.sum() + 1.5 == 1.5",
            "self.emptyDurations.sum() == duration('0')",
            "self.emptyDurations.sum() < duration('1s')",
            // Otherwise the plain empty list it is.
            "self.emptyDoubles == [] && [] == self.emptyDoubles && size(self.emptyDoubles) == 0",
            "self.emptyDoubles + [1.0] == [1.0] && self.emptyDoubles.all(x, false)",
            "[].sum() == 0 && type([].sum()) == int",
        ],
        &[],
    );
}

#[test]
fn map_list_keyed_by_a_property_whose_name_escapes() {
    // Upstream reads a key property under its escaped name (`__namespace__`), which the
    // decoded entry does not have: every entry has the same key, and each entry of the
    // other list is compared with the last entry of this one.
    let item = json!({ "namespace": strings(), "v": strings() });
    let props = json!({
        "one": map_list(&["namespace"], item.clone()),
        "two": map_list(&["namespace"], item),
    });
    let obj = json!({
        "one": [{ "namespace": "a", "v": "1" }],
        "two": [{ "namespace": "a", "v": "1" }, { "namespace": "b", "v": "2" }],
    });
    check_rules(
        props,
        obj,
        &[
            "self.one == self.one",
            "self.two != self.two",
            "self.one == [self.one[0]] && self.two != [self.two[0], self.two[1]]",
            // A merge replaces the last entry, whatever the key.
            "(self.two + self.one).size() == 2 && (self.two + self.one)[1].v == '1'",
            "(self.one + self.two).size() == 1 && (self.one + self.two)[0].v == '2'",
        ],
        &[],
    );
}

#[test]
fn set_of_objects_union_fails_as_go_hashing_a_map() {
    // Upstream hashes the set's elements, Go maps here: the runtime panics, and cel-go
    // reports the panic as an internal error.
    let item = json!({ "type": "object", "x-kubernetes-map-type": "atomic",
        "properties": { "a": strings() } });
    let props = json!({ "o": set_of(item) });
    check_rules(
        props,
        json!({ "o": [{ "a": "x" }] }),
        &["self.o.size() == 1 && self.o[0].a == 'x'"],
        &[(
            "(self.o + []).size() == 1",
            "internal error: runtime error: hash of unhashable type map[string]interface {} evaluating rule: (self.o + []).size() == 1",
        )],
    );
}
