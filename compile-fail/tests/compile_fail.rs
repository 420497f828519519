//! The lifecycle orders the types forbid: each case must fail to compile,
//! with the borrow error recorded beside it (`tests/compile_fail/*.stderr`),
//! so a case that fails for another reason fails the test.

#[test]
fn ordering_violations_do_not_compile() {
    let cases = trybuild::TestCases::new();
    cases.compile_fail("tests/compile_fail/*.rs");
}
