//! Client-given names: printable, bounded, not empty.

use super::check_name;

#[test]
fn names_are_printable_bounded_and_not_empty() {
    assert_eq!(check_name("zone", "us-east/1"), Ok(()));
    assert_eq!(
        check_name("zone", " "),
        Err("`zone` is empty; expected a name".to_owned())
    );
    assert_eq!(
        check_name("name", "a\u{7}b"),
        Err("`name` contains the control character U+0007; expected printable text".to_owned())
    );
    assert_eq!(
        check_name("zone", &"z".repeat(256)),
        Err("`zone` has 256 characters; expected at most 255".to_owned())
    );
    assert_eq!(check_name("zone", &"é".repeat(255)), Ok(()));
}
