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
    // The case's one opcode is its instruction register; its last access is a read.
    assert!(threaded.cases.contains("TORCHWM_NEXT_INSTRUCTION(0x69, 0x69, true);\n"));
    // A case with two labels: each stores its opcode as the instruction register, and the case ends
    // with its first opcode and no single instruction register.
    assert!(threaded.cases.contains(
        "torchwm_op_0b: IR = 0x0b; goto torchwm_body_0b;\ntorchwm_op_2b: IR = 0x2b; goto torchwm_body_0b;\n\
         torchwm_body_0b:\n{\n  A &= operand;\n}\nTORCHWM_NEXT_INSTRUCTION(0x0b, -1, true);\n"
    ));
    assert!(!threaded.cases.contains("break;") && !threaded.cases.contains("case "));
    let table: Vec<&str> = threaded.table.lines().collect();
    assert_eq!(table.len(), 256);
    assert_eq!(table[0x69], "&&torchwm_op_69,");
    assert_eq!(table[0x2b], "&&torchwm_op_2b,");
    // An opcode without a case stores its instruction register before the illegal instruction's case.
    assert_eq!(table[0x00], "&&torchwm_illegal_00,");
    assert!(threaded.cases.contains("torchwm_illegal_00: IR = 0x00; goto torchwm_op_illegal;\n"));
}

#[test]
fn writes_after_writes_clear_the_last_access_flag() {
    // JSR: the second push is a write after a write; its last access is a write.
    let jsr = format!(
        "{HEADER}case 0x20:\n{{\n  poke(0x0100 + SP--, PC >> 8);\n  poke(0x0100 + SP--, PC & 0xff);\n}}\nbreak;\n"
    );
    let threaded = rewrite(&jsr).expect("JSR writes twice");
    assert!(threaded.cases.contains("  poke(0x0100 + SP--, PC >> 8);\n  pokeAfterWrite(0x0100 + SP--, PC & 0xff);\n"));
    assert!(threaded.cases.contains("TORCHWM_NEXT_INSTRUCTION(0x20, 0x20, false);\n"));
    // A store: one write, its last access.
    let sta =
        format!("{HEADER}case 0x85:\n{{\n  operandAddress = peek(PC++);\n  poke(operandAddress, A);\n}}\nbreak;\n");
    let threaded = rewrite(&sta).expect("one write");
    assert!(threaded.cases.contains("TORCHWM_NEXT_INSTRUCTION(0x85, 0x85, false);\n"));
    assert!(!threaded.cases.contains("pokeAfterWrite"));
    // Any other case that writes twice, or reads after it writes, stops the build.
    for (body, why) in
        [("  poke(1, A);\n  poke(2, A);", "writes 2 times"), ("  poke(1, A);\n  A = peek(2);", "reads after it writes")]
    {
        let ins = format!("{HEADER}case 0x85:\n{{\n{body}\n}}\nbreak;\n");
        let error = rewrite(&ins).err().unwrap_or_else(|| panic!("accepted {ins:?}"));
        assert!(error.contains(why), "{error:?} does not say {why:?}");
    }
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
