//! Hostile input for the flaky-test analysis: broken syntax, 300-level nesting, a 4 MB
//! one-line expression, binary garbage, cancellation. Nothing panics or overflows; broken
//! files keep the tests that parse.

use crosscheck::analysis::flaky::{analyze_source, Category, FlakyOptions, FlakyReport};
use crosscheck::syntax::{Cancel, Language};

/// Runs the analysis on a thread with a small (512 KiB) stack: recursion would overflow.
fn on_small_stack(lang: Language, src: &str) -> FlakyReport {
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .stack_size(512 * 1024)
            .spawn_scoped(s, || {
                analyze_source(lang, src, &FlakyOptions::default(), &Cancel::never())
            })
            .expect("spawn")
            .join()
            .expect("no panic or overflow")
    })
}

#[test]
fn broken_java_keeps_the_tests_that_parse() {
    let src = r#"
class T {
  @Test public void sleeps() throws Exception { Thread.sleep(100); assertTrue(done); }
  @Test public void broken() { int x = ; if (x > { }
  @Test public void seeded() { Random r = new Random(); assertTrue(r.nextInt(5) < 5); }
}"#;
    let r = on_small_stack(Language::Java, src);
    let sleeps = r
        .tests
        .iter()
        .find(|t| t.name.ends_with("sleeps"))
        .expect("sleeps found");
    assert_eq!(sleeps.category, Some(Category::AsyncWait));
    assert!(!r.errors.is_empty(), "syntax errors are reported");
}

#[test]
fn broken_python_keeps_the_tests_that_parse() {
    let src = "import time\n\ndef test_a():\n    time.sleep(1)\n    assert done()\n\ndef test_b(:\n    x = (\n\ndef test_c():\n    assert 0.1 + 0.2 == 0.3\n";
    let r = on_small_stack(Language::Python, src);
    let a = r
        .tests
        .iter()
        .find(|t| t.name == "test_a")
        .expect("test_a found");
    assert_eq!(a.category, Some(Category::AsyncWait));
}

#[test]
fn three_hundred_nested_blocks() {
    let mut body = String::new();
    for i in 0..300 {
        body.push_str(&format!("if (x > {i}) {{ "));
    }
    body.push_str("Thread.sleep(10); assertTrue(ok);");
    body.push_str(&"}".repeat(300));
    let src =
        format!("class T {{ @Test public void deep() throws Exception {{ int x = 1; {body} }} }}");
    let r = on_small_stack(Language::Java, &src);
    assert_eq!(r.tests.len(), 1);
    assert_eq!(r.tests[0].category, Some(Category::AsyncWait));

    let mut py = String::from("import time\ndef test_deep():\n");
    for i in 0..300 {
        py.push_str(&" ".repeat(4 * (i + 1)));
        py.push_str(&format!("if x > {i}:\n"));
    }
    py.push_str(&" ".repeat(4 * 301));
    py.push_str("time.sleep(1)\n");
    let r = on_small_stack(Language::Python, &py);
    assert_eq!(r.tests.len(), 1);
}

#[test]
fn four_megabyte_expression() {
    let expr = format!("{}1", "1+".repeat(2 * 1024 * 1024));
    let src = format!(
        "class T {{ @Test public void big() {{ int x = {expr}; assertEquals(0.5, x); }} }}"
    );
    assert!(src.len() >= 4 * 1024 * 1024);
    let r = on_small_stack(Language::Java, &src);
    assert_eq!(r.tests.len(), 1);
    let py = format!("def test_big():\n    x = {expr}\n    assert x == 0.5\n");
    let r = on_small_stack(Language::Python, &py);
    assert_eq!(r.tests.len(), 1);
}

#[test]
fn binary_garbage_never_panics() {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut bytes = Vec::with_capacity(64 * 1024);
    for _ in 0..64 * 1024 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        bytes.push((state >> 24) as u8);
    }
    let text = String::from_utf8_lossy(&bytes).into_owned();
    for lang in [Language::Java, Language::Python] {
        let _ = on_small_stack(lang, &text);
        let with_test = match lang {
            Language::Java => format!("class T {{ @Test void t() {{ {text} }} }}"),
            _ => format!("def test_t():\n    {text}\n"),
        };
        let _ = on_small_stack(lang, &with_test);
    }
}

#[test]
fn other_languages_have_no_tests() {
    let r = analyze_source(
        Language::C,
        "void test_x(void) { sleep(1); }",
        &FlakyOptions::default(),
        &Cancel::never(),
    );
    assert!(r.tests.is_empty());
}

#[test]
fn cancelled_analysis_is_partial() {
    let cancel = Cancel::new();
    cancel.cancel();
    let src = "class T { @Test void a() { Thread.sleep(1); } @Test void b() {} }";
    let file = crosscheck::syntax::ParsedFile::parse(Language::Java, src);
    let r = crosscheck::analysis::flaky::analyze_file(&file, &FlakyOptions::default(), &cancel);
    assert!(r.partial);
    assert!(r.tests.is_empty());
}
