//! The build's rewrite of ALE's 6502 instruction cases for threaded dispatch
//! (`build/threaded_dispatch.rs`): what it makes of the structure it was written for, and that it
//! refuses anything else.
#[allow(dead_code)]
#[path = "../build/threaded_dispatch.rs"]
mod threaded_dispatch;

use threaded_dispatch::rewrite;

const HEADER: &str = "/**\n  Code and cases to emulate each of the 6502 instruction\n*/\n\n#ifndef NOTSAMEPAGE\n  #define NOTSAMEPAGE(a, b) (((a) ^ (b)) & 0xff00)\n#endif\n";

#[test]
fn cases_get_labels_and_end_in_the_dispatch_step() {
    let ins = format!(
        "{HEADER}case 0x69:\n{{\n  operand = peek(PC++); // for the sum\n}}\n{{\n  A += operand;\n}}\nbreak;\n\n\
         case 0x0b:\ncase 0x2B:\n{{\n  A &= operand;\n}}\nbreak;\n"
    );
    let threaded = rewrite(&ins).expect("the expected structure");
    assert_eq!(threaded.cases_and_opcodes, (2, 3));
    assert!(threaded.cases.starts_with(HEADER));
    assert!(threaded.cases.contains("torchwm_op_69:\n{\n  operand = peek(PC++); // for the sum\n}"));
    assert!(threaded.cases.contains("TORCHWM_NEXT_INSTRUCTION(0x69);\n"));
    // A case with two labels ends with its first opcode.
    assert!(threaded
        .cases
        .contains("torchwm_op_0b:\ntorchwm_op_2b:\n{\n  A &= operand;\n}\nTORCHWM_NEXT_INSTRUCTION(0x0b);\n"));
    assert!(!threaded.cases.contains("break;") && !threaded.cases.contains("case "));
    let table: Vec<&str> = threaded.table.lines().collect();
    assert_eq!(table.len(), 256);
    assert_eq!(table[0x69], "&&torchwm_op_69,");
    assert_eq!(table[0x2b], "&&torchwm_op_2b,");
    assert_eq!(table[0x00], "&&torchwm_op_illegal,");
}

#[test]
fn anything_else_stops_the_build() {
    let case = |body: &str| format!("{HEADER}case 0x69:\n{{\n{body}\n}}\nbreak;\n");
    for (ins, why) in [
        (case("  if(C) break;"), "`break`"),
        (case("  return;"), "`return`"),
        (case("  for(;;) {}"), "`for`"),
        (case("  switch(A) {}"), "`switch`"),
        (case("  goto out;"), "`goto`"),
        (format!("{HEADER}case 0x69:\n{{\n  A = 0;\n}}\ncase 0x6a:\n{{\n}}\nbreak;\n"), "falls through"),
        (format!("{HEADER}case 0x69:\n{{\n}}\nbreak;\ncase 0x69:\n{{\n}}\nbreak;\n"), "two cases"),
        (format!("{HEADER}case 0x6:\n{{\n}}\nbreak;\n"), "two-digit hex"),
        (format!("{HEADER}  A = 0;\n"), "code outside a case"),
        (format!("{HEADER}case 0x69:\nbreak;\n"), "without a body"),
        (format!("{HEADER}case 0x69:\n{{\n}}\n"), "ends inside a case"),
    ] {
        let error = rewrite(&ins).err().unwrap_or_else(|| panic!("accepted {ins:?}"));
        assert!(error.contains(why), "{error:?} does not say {why:?}");
    }
}
