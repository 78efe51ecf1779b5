//! Prints the OpenAPI document of the API (what `docs/openapi.json` holds); `xtask codegen`
//! runs it and `--check` compares.

fn main() {
    print!("{}", berth_api::openapi_json());
}
