//! More cases of upstream's `TestValidationExpressions`: object, map, list and
//! int-or-string access, type and object meta, nullability, and two-variable
//! comprehensions.

use serde_json::{Value as Json, json};

use super::check_rules;
use super::upstream::{f, run, t};

#[test]
fn object_and_map_access() {
    let int = t("integer");
    let props = json!({
        "a": { "type": "object", "properties": {
            "b": int, "c": int, "d": { "type": "integer", "nullable": true } } },
        "a1": { "type": "object", "properties": {
            "b1": { "type": "object", "properties": { "c1": int } },
            "d2": { "type": "object", "properties": { "e2": int } } } },
        "val": { "type": "object", "additionalProperties": int },
    });
    let obj = json!({ "a": { "b": 1, "d": null }, "a1": { "b1": { "c1": 4 } }, "a3": {},
        "val": { "b": 1, "d": 2 } });
    check_rules(
        props,
        obj,
        &[
            "has(self.a.b)",
            "!has(self.a.c)",
            "!has(self.a.d)",
            "has(self.a1.b1.c1)",
            "!(has(self.a1.d2) && has(self.a1.d2.e2))",
            "!('a' in self.val) && 'b' in self.val",
            "!has(self.val.a) && has(self.val.b)",
            "self.val.all(k, self.val[k] > 0)",
            "self.val.exists_one(k, self.val[k] == 2)",
            "!self.val.exists_one(k, self.val[k] > 0)",
            "size(self.val) == 2",
            "self.val.map(k, self.val[k]).exists(v, v == 1)",
            "size(self.val.filter(k, self.val[k] > 1)) == 1",
        ],
        &[
            ("has(self.a.z)", "undefined field 'z'"),
            ("has(self.a1.d2.e2)", "no such key: d2"),
            ("self.val['c'] == 1", "no such key: c"),
        ],
    );
}

#[test]
fn list_map_access() {
    let s = t("string");
    let props = json!({ "listMap": { "type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["k"],
        "items": { "type": "object", "properties": { "k": s, "v": s, "v2": s } } } });
    let obj = json!({ "listMap": [
        { "k": "a1", "v": "b1" }, { "k": "a2", "v": "b2" }, { "k": "a3", "v": "b3", "v2": "z" } ] });
    check_rules(
        props,
        obj,
        &[
            "has(self.listMap[0].v)",
            "self.listMap.all(m, m.k.startsWith('a'))",
            "self.listMap.all(m, !has(m.v2) || m.v2 == 'z')",
            "self.listMap.exists_one(m, m.k == 'a3')",
            "!self.listMap.exists_one(m, m.k.startsWith('a'))",
            "self.listMap.map(m, m.v).exists(v, v == 'b1')",
            "self.listMap.exists(m, has(m.v2) && m.v2 == 'z')",
            "self.listMap.map(m, has(m.v2) && m.v2 == 'z', m.v2).size() == 1",
            "self.listMap.exists(m, m.v2 == 'z')",
            "!self.listMap.all(m, m.v2 != 'z')",
        ],
        &[
            ("self.listMap.all(m, m.v2 == 'z')", "no such key: v2"),
            ("self.listMap.exists_one(m, m.v2 == 'z')", "no such key: v2"),
            (
                "self.listMap.filter(m, m.v2 == 'z').size() == 1",
                "no such key: v2",
            ),
            ("self.listMap.map(m, m.v2).size() == 1", "no such key: v2"),
        ],
    );
}

#[test]
fn escaping() {
    let names = [
        "true",
        "false",
        "null",
        "in",
        "as",
        "break",
        "const",
        "continue",
        "else",
        "for",
        "function",
        "if",
        "import",
        "let",
        "loop",
        "package",
        "namespace",
        "return",
        "var",
        "void",
        "while",
    ];
    let mut props = serde_json::Map::new();
    let mut obj = serde_json::Map::new();
    for (i, n) in names.iter().enumerate() {
        props.insert(n.to_string(), t("integer"));
        obj.insert(n.to_string(), json!(i + 1));
    }
    let others = [
        ("int", 101),
        ("uint", 102),
        ("double", 103),
        ("bool", 104),
        ("string", 105),
        ("bytes", 106),
        ("list", 107),
        ("map", 108),
        ("null_type", 109),
        ("type", 110),
        ("self", 201),
        ("getDate", 202),
        ("all", 203),
        ("_true", 301),
        ("dot.dot", 401),
        ("dash-dash", 402),
        ("slash/slash", 403),
        ("underscore_underscore", 404),
        ("doubleunderscore__doubleunderscore", 405),
    ];
    for (n, v) in others {
        props.insert(n.to_owned(), t("integer"));
        obj.insert(n.to_owned(), json!(v));
    }
    props.insert("size".to_owned(), t("string"));
    obj.insert("size".to_owned(), json!("204"));
    let mut valid: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("self.__{n}__ == {}", i + 1))
        .collect();
    valid.extend(
        [
            "self.int == 101",
            "self.uint == 102",
            "self.double == 103",
            "self.bool == 104",
            "self.string == 105",
            "self.bytes == 106",
            "self.list == 107",
            "self.map == 108",
            "self.null_type == 109",
            "self.type == 110",
            "self.self == 201",
            "self.getDate == 202",
            "self.all == 203",
            "self.size == '204'",
            "self._true == 301",
            "self.__true__ != 301",
            "self.dot__dot__dot == 401",
            "self.dash__dash__dash == 402",
            "self.slash__slash__slash == 403",
            "self.underscore_underscore == 404",
            "self.doubleunderscore__underscores__doubleunderscore == 405",
        ]
        .map(str::to_owned),
    );
    let valid: Vec<&str> = valid.iter().map(String::as_str).collect();
    check_rules(
        Json::Object(props),
        Json::Object(obj),
        &valid,
        &[
            // cel-go (ANTLR's Go runtime) words it "mismatched input 'true' expecting
            // IDENTIFIER"; the Rust runtime's recovery words some syntax errors otherwise.
            (
                "self.true == 1",
                "compilation failed: ERROR: <input>:1:6: Syntax error: ",
            ),
            ("self.__illegal__ == 301", "undefined field '__illegal__'"),
        ],
    );
}

#[test]
fn map_keys_are_not_escaped() {
    let props = json!({ "m": { "type": "object", "additionalProperties": t("integer") } });
    let obj = json!({ "m": { "@": 1, "9": 2, "int": 3, "./-": 4, "👑": 5 } });
    check_rules(
        props,
        obj,
        &[
            "self.m['@'] == 1",
            "self.m['9'] == 2",
            "self.m['int'] == 3",
            "self.m['./-'] == 4",
            "self.m['👑'] == 5",
        ],
        &[],
    );
}

#[test]
fn optionals() {
    let s = t("string");
    let props = json!({
        "presentObj": { "type": "object", "properties": { "presentStr": s } },
        "absentObj": { "type": "object", "properties": { "absentStr": s } },
        "m": { "type": "object", "additionalProperties": s },
        "l": { "type": "array", "items": s },
    });
    let obj = json!({ "presentObj": { "presentStr": "value" }, "m": { "k": "v" }, "l": ["a"] });
    check_rules(
        props,
        obj,
        &[
            "self.?presentObj.?presentStr == optional.of('value')",
            "self.presentObj.?presentStr == optional.of('value')",
            "self.presentObj.?presentStr.or(optional.of('nope')) == optional.of('value')",
            "self.presentObj.?presentStr.orValue('') == 'value'",
            "self.presentObj.?presentStr.hasValue() == true",
            "self.presentObj.?presentStr.optMap(v, v == 'value').hasValue()",
            "self.?absentObj.?absentStr == optional.none()",
            "self.?absentObj.?absentStr.or(optional.of('nope')) == optional.of('nope')",
            "self.?absentObj.?absentStr.orValue('nope') == 'nope'",
            "self.m[?'k'] == optional.of('v')",
            "self.m[?'x'].orValue('nope') == 'nope'",
            "self.l[?0] == optional.of('a')",
            "self.l[?1] == optional.none()",
            "optional.ofNonZeroValue(1).hasValue()",
            "optional.ofNonZeroValue('a').hasValue()",
            "optional.ofNonZeroValue(0) == optional.none()",
            "optional.ofNonZeroValue('') == optional.none()",
            "optional.ofNonZeroValue([]) == optional.none()",
            "{?'k': optional.none(), 'k2': 'v2'} == {'k2': 'v2'}",
            "{?'k': optional.of('v'), 'k2': 'v2'} == {'k': 'v', 'k2': 'v2'}",
            "['a', ?optional.none(), 'c'] == ['a', 'c']",
            "['a', ?optional.of('v'), 'c'] == ['a', 'v', 'c']",
        ],
        &[(
            "self.absentObj.?absentStr == optional.none()",
            "no such key: absentObj",
        )],
    );
}

#[test]
fn quantities() {
    run(
        &[json!("20"), json!("200M")],
        &[t("string"), t("string")],
        &[
            "isQuantity(self.val1)",
            "isQuantity(self.val2)",
            "isQuantity(\"20Mi\")",
            "quantity(self.val2) == quantity(\"0.2G\") && quantity(\"0.2G\") == quantity(\"200M\")",
            "quantity(\"2M\") == quantity(\"0.002G\") && quantity(\"2000k\") == quantity(\"2M\")",
            "quantity(self.val1).isLessThan(quantity(\"100M\"))",
            "quantity(self.val2).isGreaterThan(quantity(\"50M\"))",
            "quantity(self.val2).compareTo(quantity(\"0.2G\")) == 0",
            "quantity(\"50k\").add(quantity(self.val1)) == quantity(\"50.02k\")",
            "quantity(\"50k\").sub(quantity(self.val1)) == quantity(\"49980\")",
            "quantity(self.val1).isInteger()",
        ],
        &[],
    );
}

#[test]
fn stdlib_list_functions() {
    let list = |items: Json| json!({ "type": "array", "items": items });
    let props = json!({
        "ints": list(t("integer")), "emptyInts": list(t("integer")),
        "doubles": list(t("number")), "intBackedDoubles": list(t("number")),
        "durations": list(f("duration")), "unsortedDurations": list(f("duration")),
        "strings": list(t("string")), "emptyStrings": list(t("string")),
        "dates": list(f("date")),
        "objs": list(json!({ "type": "object", "properties": { "f1": t("string"), "f2": t("string") } })),
    });
    let obj = json!({
        "ints": [1, 2, 2, 3], "emptyInts": [], "doubles": [1.0, 2.0, 2.0, 3.0],
        "intBackedDoubles": [1, 2, 2, 3], "durations": ["1s", "1m", "1m", "1h"],
        "unsortedDurations": ["1m", "1s"], "strings": ["a", "b", "b", "c"], "emptyStrings": [],
        "dates": ["2000-01-01", "2000-02-01", "2000-02-01", "2010-01-01"],
        "objs": [{ "f1": "a", "f2": "a" }, { "f1": "a", "f2": "b" }, { "f1": "a", "f2": "b" }, { "f1": "a", "f2": "c" }],
    });
    check_rules(
        props,
        obj,
        &[
            "self.ints.sum() == 8",
            "self.ints.min() == 1 && self.ints.max() == 3",
            "self.emptyInts.sum() == 0",
            "self.emptyInts.isSorted()",
            "self.ints.indexOf(2) == 1 && self.ints.lastIndexOf(2) == 2",
            "self.doubles.sum() == 8.0",
            "self.doubles.indexOf(2.0) == 1",
            "self.intBackedDoubles.sum() == 8.0",
            "self.intBackedDoubles.min() == 1.0",
            "self.durations.sum() == duration('1h2m1s')",
            "self.durations.min() == duration('1s') && self.durations.max() == duration('1h')",
            "self.durations.isSorted() && self.unsortedDurations.isSorted() == false",
            "self.durations.indexOf(duration('1m')) == 1",
            "self.strings.min() == 'a' && self.strings.max() == 'c'",
            "self.dates.min() == timestamp('2000-01-01T00:00:00.000Z')",
            "self.dates.isSorted()",
            "self.dates.lastIndexOf(timestamp('2000-02-01T00:00:00.000Z')) == 2",
            "[[1], [2]].indexOf([1]) == 0",
            "[{'a': 1}, {'b': 2}].lastIndexOf({'b': 2}) == 1",
            "self.objs.indexOf(self.objs[1]) == 1",
            "self.objs.lastIndexOf(self.objs[1]) == 2",
            "([0] + self.emptyInts).min() == 0",
            "dyn([]).sum() == 0",
            "dyn([1, 2]).sum() == 3",
            "dyn([1.0, 2.0]).sum() == 3.0",
            "[].sum() == 0",
        ],
        &[
            ("self.emptyInts.min() == 1", "min called on empty list"),
            ("self.emptyInts.max() == 3", "max called on empty list"),
            ("self.emptyStrings.min() == 'a'", "min called on empty list"),
        ],
    );
}

#[test]
fn type_and_object_meta() {
    let meta = json!({ "name": "foo", "generateName": "pickItForMe", "namespace": "xyz" });
    let pod =
        json!({ "apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": { "field1": "a" } });
    // The resource root: 'kind', 'apiVersion', 'metadata.name' and 'metadata.generateName'
    // are accessible without being declared.
    let props = json!({ "spec": { "type": "object", "properties": { "field1": t("string") } } });
    check_rules(
        props,
        pod.clone(),
        &[
            "self.kind == 'Pod'",
            "self.apiVersion == 'v1'",
            "self.metadata.name == 'foo'",
            "self.metadata.generateName == 'pickItForMe'",
            "self.spec.field1 == 'a'",
        ],
        &[(
            "has(self.metadata.namespace)",
            "undefined field 'namespace'",
        )],
    );
    let embedded =
        json!({ "embedded": { "type": "object", "x-kubernetes-embedded-resource": true } });
    check_rules(
        embedded,
        json!({ "embedded": pod.clone() }),
        &[
            "self.embedded.kind == 'Pod'",
            "self.embedded.apiVersion == 'v1'",
            "self.embedded.metadata.name == 'foo'",
            "self.embedded.metadata.generateName == 'pickItForMe'",
        ],
        &[
            (
                "has(self.embedded.metadata.namespace)",
                "undefined field 'namespace'",
            ),
            ("has(self.embedded.spec)", "undefined field 'spec'"),
        ],
    );
    let with_props = json!({ "embedded": { "type": "object", "x-kubernetes-embedded-resource": true,
        "properties": { "spec": { "type": "object", "properties": { "field1": t("string") } } } } });
    check_rules(
        with_props,
        json!({ "embedded": pod }),
        &["self.embedded.spec.field1 == 'a' && self.embedded.kind == 'Pod'"],
        &[(
            "has(self.embedded.metadata.namespace)",
            "undefined field 'namespace'",
        )],
    );
}

#[test]
fn int_or_string() {
    let ios = json!({ "x-kubernetes-int-or-string": true });
    let props = json!({ "something": ios });
    let cross = [
        "self.something == 1 || self.something == '25%'",
        "self.something == '25%' || self.something == 1",
        "type(self.something) == int ? self.something == 1 : self.something == '25%'",
        "self.something != ['anything']",
    ];
    let mut valid = vec!["self.something == '25%'", "self.something != 1"];
    valid.extend(cross);
    check_rules(props.clone(), json!({ "something": "25%" }), &valid, &[]);
    let mut valid = vec!["self.something == 1", "self.something != 'some string'"];
    valid.extend(cross);
    check_rules(props, json!({ "something": 1 }), &valid, &[]);
    let nullable = json!({ "something": { "x-kubernetes-int-or-string": true, "nullable": true } });
    check_rules(
        nullable,
        json!({ "something": null }),
        &["!has(self.something)"],
        &[("type(self.something) == int", "no such key")],
    );
    let props = json!({ "min": ios, "current": t("integer"), "available": t("integer") });
    check_rules(
        props,
        json!({ "min": "50%", "current": 5, "available": 10 }),
        &[
            "type(self.min) == string && self.min.matches(r'(\\d+(\\.\\d+)?%)')",
            "type(self.min) == int ? self.current <= self.min : double(self.current) / double(self.available) >= double(self.min.replace('%', '')) / 100.0",
        ],
        &[],
    );
}

#[test]
fn field_nullability_and_type_mismatches() {
    let s = t("string");
    let props = json!({
        "unsetPlainStr": s,
        "unsetNullableStr": { "type": "string", "nullable": true },
        "setPlainStr": s,
        "setNullableStr": { "type": "string", "nullable": true },
        "setToNullNullableStr": { "type": "string", "nullable": true },
        "i": t("integer"),
    });
    let obj = json!({ "setPlainStr": "v1", "setNullableStr": "v3", "setToNullNullableStr": null, "i": 1 });
    check_rules(
        props,
        obj,
        &[
            "!has(self.unsetPlainStr)",
            "!has(self.unsetNullableStr)",
            "has(self.setPlainStr) && self.setPlainStr == 'v1'",
            "has(self.setNullableStr) && self.setNullableStr == 'v3'",
            "type(self.setNullableStr) != null_type",
            "!has(self.setToNullNullableStr)",
            "self.i < 2.5",
        ],
        &[
            (
                "self.unsetPlainStr == null",
                "no matching overload for '_==_' applied to '(string, null)",
            ),
            (
                "self.unsetNullableStr == null",
                "no matching overload for '_==_' applied to '(string, null)",
            ),
            (
                "self.setPlainStr != null",
                "no matching overload for '_!=_' applied to '(string, null)",
            ),
            (
                "self.i == 'x'",
                "compilation failed: ERROR: <input>:1:8: found no matching overload for '_==_' applied to '(int, string)'",
            ),
            (
                "self.i == 1.0",
                "found no matching overload for '_==_' applied to '(int, double)'",
            ),
        ],
    );
}

#[test]
fn null_values_in_container_types() {
    let ns = json!({ "type": "string", "nullable": true });
    let props = json!({
        "m": { "type": "object", "additionalProperties": ns },
        "l": { "type": "array", "items": ns },
        "s": { "type": "array", "x-kubernetes-list-type": "set", "items": ns },
    });
    let obj = json!({ "m": { "a": null, "b": "not-nil" }, "l": [null, "not-nil"], "s": [null, "not-nil"] });
    check_rules(
        props,
        obj,
        &[
            "self.m.size() == 2",
            "'a' in self.m",
            "type(self.m['a']) == null_type",
            "self.l.size() == 2",
            "type(self.l[0]) == null_type",
            "self.s.size() == 2",
            "type(self.s[0]) == null_type",
        ],
        &[],
    );
}

#[test]
fn two_variable_comprehensions() {
    let props = json!({
        "val": { "type": "object", "additionalProperties": t("integer") },
        "array": { "type": "array", "items": t("integer") },
    });
    let obj = json!({ "val": { "b": 1, "d": 2 }, "array": [1, 1, 2, 2, 3, 3, 4, 5] });
    check_rules(
        props,
        obj,
        &[
            "self.val.all(k, v, v > 0)",
            "self.val.exists(k, v, v == 2)",
            "self.val.existsOne(k, v, v == 2)",
            "self.val.transformMap(k, v, v > 1, v + 1).size() == 1",
            "self.val.transformMap(k, v, v + 1).size() == 2",
            "self.val.transformMapEntry(k, v, v > 1, {k + '2': v + 1}).size() == 1",
            "self.val.transformMapEntry(k, v, {k + '2': v + 1}).size() == 2",
            "self.val.transformMap(k, v, v * 10) == {'b': 10, 'd': 20}",
            "self.array.all(i, e, e > 0)",
            "self.array.exists(i, e, e > 2)",
            "self.array.existsOne(i, e, e > 4)",
            "self.array.transformList(i, e, e > 2, e * 2).size() > 0",
            "self.array.transformList(i, e, e * 2).size() > 0",
            "self.array.transformList(i, e, i < 2, e + i) == [1, 2]",
            "!self.array.existsOne(i, e, e == 1)",
            "self.array.all(i, e, self.val.all(k, v, v > 0 && e > 0))",
        ],
        &[(
            "self.array.transformMapEntry(i, e, {'k': e}).size() == 1",
            "insert failed: key",
        )],
    );
}
