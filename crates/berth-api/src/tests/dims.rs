//! Promise bodies and answers through the dimension registry: any alias names one dimension
//! on input, answers carry Promise's names, two keys of one dimension are refused.

use serde_json::{Value, json};

use super::{add_provider, app, promise};

#[tokio::test]
async fn any_alias_names_one_dimension_and_answers_speak_promise() {
    let app = app().await;
    let pid = add_provider(
        &app,
        json!([{"name": "m1.small", "vcpus": 1, "ram": 1024, "disk": 10}]),
    )
    .await;
    let pool = format!("default/{pid}");
    // Placement's and Nova's names, and a unit.
    let (s, v) = promise(
        &app,
        "/increase-capacity",
        json!({"source": pid, "capacity": {"VCPU": 8, "MEMORY_MB": "8 GB", "DISK_GB": 50, "instances": 4}}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    // Promise's names and Nova's draw on the same dimensions.
    let (s, v) = promise(
        &app,
        "/create-reservation",
        json!({"provider": pid, "capacity": {"cores": 2, "ram": 1024, "gigabytes": 10}}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = promise(
        &app,
        "/create-reservation",
        json!({"provider": pid, "capacity": {"vcpus": "2", "memory_mb": 1024, "disk": 10}}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    let (s, v) = promise(
        &app,
        "/create-instance",
        json!({"provider-id": pid, "flavor": "m1.small"}),
    )
    .await;
    assert_eq!(s, 200, "{v}");
    assert_eq!(
        v["capacity"],
        json!({"cores": 1, "gigabytes": 10, "instances": 1, "ram": 1024})
    );
    let (_, v) = promise(
        &app,
        "/query-capacity",
        json!({"capacity": "available", "show-utilization": false}),
    )
    .await;
    assert_eq!(
        v["capacity"][&pool],
        json!({"cores": 3, "gigabytes": 20, "instances": 3, "ram": 5120}),
        "{v}"
    );
    let (_, v) = promise(
        &app,
        "/query-reservation",
        json!({"show-utilization": false}),
    )
    .await;
    for field in ["capacity", "amounts", "remaining"] {
        assert_eq!(
            v["details"][0][field],
            json!({"cores": 2, "gigabytes": 10, "ram": 1024}),
            "{field}: {v}"
        );
    }
    // A conflict's offers name what is left the Promise way.
    let (s, v) = promise(
        &app,
        "/create-reservation",
        json!({"provider": pid, "capacity": {"vCPU": 4}}),
    )
    .await;
    assert_eq!((s, v["result"].as_str()), (409, Some("conflict")), "{v}");
    assert_eq!(v["offers"][0]["max_reservable"], json!({"cores": 3}), "{v}");
}

#[tokio::test]
async fn two_names_of_one_dimension_and_fractions_are_refused_by_name() {
    let app = app().await;
    let pid = add_provider(&app, json!([])).await;
    let cases: [(Value, &str, &str); 4] = [
        (
            json!({"cores": 2, "vcpus": 2}),
            "capacity.vcpus",
            "`capacity`: `cores` and `vcpus` both name dimension `vcpu`; expected one of them",
        ),
        (
            json!({"gigabytes": "512 MB"}),
            "capacity.gigabytes",
            "`capacity.gigabytes` is \"512 MB\", not a whole number of GiB; expected whole GiB",
        ),
        (
            json!({"cores": "2 GB"}),
            "capacity.cores",
            "`capacity.cores` has unit `GB`; expected a plain count (units apply to memory and disk)",
        ),
        (
            json!({"ram": "4 parsecs"}),
            "capacity.ram",
            "`capacity.ram` has unknown unit `parsecs`; expected one of B, KB, MB, GB, TB (or KiB, MiB, GiB, TiB)",
        ),
    ];
    for (capacity, path, msg) in cases {
        let (s, v) = promise(
            &app,
            "/increase-capacity",
            json!({"source": pid, "capacity": capacity}),
        )
        .await;
        assert_eq!((s, v["result"].as_str()), (400, Some("error")), "{v}");
        assert_eq!(v["message"], msg, "{v}");
        assert_eq!(v["diagnostics"][0]["path"], path, "{v}");
    }
    // Nothing was changed by the refused requests.
    let (_, v) = promise(&app, "/query-capacity", json!({"show-utilization": false})).await;
    assert_eq!(v["capacity"].as_object().map(|m| m.len()), Some(0), "{v}");
}
