//! ALE's 6502 instruction cases (`M6502Low.ins`) rewritten for threaded dispatch: each case gets a
//! label, and each case's closing `break;` becomes `TORCHWM_NEXT_INSTRUCTION(0xNN, IR, READ)` (the case's first
//! opcode, its one opcode or -1, and whether its last access is a read), which src/ffi/cpu/execute.inc defines as the loop's own step (count down, stop test, opcode
//! fetch, cycles) ending in a `goto *` through a table of those labels. Every case then ends in an indirect jump of its own, which
//! the branch predictor tells apart, instead of all sharing the switch's one.
//!
//! The instruction register (IR) is stored where it is read, not at each fetch: when the loop leaves (saved
//! states hold it), from the case's one opcode, a constant; a case of several opcodes (ALE's `NOP`s and
//! others) gets a label per opcode that stores it and jumps to the shared body, and so does each opcode
//! without a case before the illegal instruction's message.
//!
//! `myLastAccessWasRead` likewise: the loop keeps it true, as it is at every write but JSR's and BRK's
//! second and third pushes (rewritten to `pokeAfterWrite`, see `writes`), and leaves ALE's value on
//! leaving, the case's constant READ.
//!
//! The rewrite is mechanical and checked: the file must be the exact structure it was written for,
//! a run of `case 0xNN:` lines, a body, and `break;` on a line of its own, repeated, with only
//! comments, preprocessor lines and blank lines between; no body may hold a `break`, `case`,
//! `default`, `goto`, `return`, `continue`, `switch` or loop of its own. Anything else stops the build
//! (the source is pinned by sha256, so it only can if the pin changes).
use std::fmt::Write;

/// The rewritten cases, and the dispatch table's 256 entries (one label address per opcode, in order;
/// opcodes without a case go to `torchwm_op_illegal`, ALE's `default`).
pub struct Threaded {
    pub cases: String,
    pub table: String,
    /// How many cases, and how many opcodes they cover.
    pub cases_and_opcodes: (usize, usize),
}

enum State {
    /// Between cases: comments, preprocessor lines and blank lines only.
    Between,
    /// After one or more `case` lines, before the body.
    Labels,
    /// In a case's body, before its `break;`.
    Body,
}

pub fn rewrite(ins: &str) -> Result<Threaded, String> {
    let mut cases = String::with_capacity(ins.len() + ins.len() / 4);
    let mut defined = [false; 256];
    let mut state = State::Between;
    let mut in_comment = false;
    let mut count = 0;
    // The opcodes of the case being read, and its body so far.
    let mut labels: Vec<u8> = Vec::new();
    let mut body = String::new();
    for (index, line) in ins.lines().enumerate() {
        let at = || format!("M6502Low.ins line {}: {line:?}", index + 1);
        // Block comments (the file's headers) stand between cases only.
        if in_comment || (matches!(state, State::Between) && line.trim_start().starts_with("/*")) {
            in_comment = !line.trim_end().ends_with("*/");
            cases.push_str(line);
            cases.push('\n');
            continue;
        }
        if let Some(opcode) = case_label(line) {
            if matches!(state, State::Body) {
                return Err(format!("{}: a case falls through into the next", at()));
            }
            let opcode = opcode.ok_or_else(|| format!("{}: not a two-digit hex opcode", at()))?;
            if std::mem::replace(&mut defined[opcode as usize], true) {
                return Err(format!("{}: opcode {opcode:#04x} has two cases", at()));
            }
            if !matches!(state, State::Labels) {
                labels.clear();
            }
            labels.push(opcode);
            state = State::Labels;
            continue;
        }
        match state {
            State::Between => {
                let trimmed = line.trim();
                if !(trimmed.is_empty() || trimmed.starts_with("//") || trimmed.starts_with('#')) {
                    return Err(format!("{}: code outside a case", at()));
                }
            }
            State::Labels | State::Body => {
                if line == "break;" {
                    if matches!(state, State::Labels) {
                        return Err(format!("{}: a case without a body", at()));
                    }
                    let first = labels[0];
                    let ir = if labels.len() == 1 { format!("{first:#04x}") } else { "-1".into() };
                    let (rewritten, last_was_read) = writes(&body, first).map_err(|e| format!("{}: {e}", at()))?;
                    cases.push_str(&rewritten);
                    body.clear();
                    writeln!(cases, "TORCHWM_NEXT_INSTRUCTION({first:#04x}, {ir}, {last_was_read});")
                        .expect("writing to a String");
                    state = State::Between;
                    count += 1;
                    continue;
                }
                if let Some(word) = control_word(line) {
                    return Err(format!("{}: `{word}` in a case body", at()));
                }
                if matches!(state, State::Labels) {
                    write_labels(&mut cases, &labels);
                }
                state = State::Body;
                body.push_str(line);
                body.push('\n');
                continue;
            }
        }
        cases.push_str(line);
        cases.push('\n');
    }
    if in_comment || !matches!(state, State::Between) {
        return Err("M6502Low.ins ends inside a case".into());
    }
    let opcodes = defined.iter().filter(|d| **d).count();
    let mut table = String::new();
    for (opcode, defined) in defined.iter().enumerate() {
        match defined {
            true => writeln!(table, "&&torchwm_op_{opcode:02x},"),
            false => writeln!(table, "&&torchwm_illegal_{opcode:02x},"),
        }
        .expect("writing to a String");
        if !defined {
            writeln!(cases, "torchwm_illegal_{opcode:02x}: IR = {opcode:#04x}; goto torchwm_op_illegal;")
                .expect("writing to a String");
        }
    }
    Ok(Threaded { cases, table, cases_and_opcodes: (count, opcodes) })
}

/// The instructions that write twice (JSR, BRK: two and three pushes); every other case writes at most
/// once, after its reads.
const WRITES_TWICE: [(u8, usize); 2] = [(0x20, 2), (0x00, 3)];

/// A case's body with the writes that follow a write (JSR's and BRK's second and third pushes) made
/// `pokeAfterWrite(`, which src/ffi/cpu/execute.inc defines as the write with `myLastAccessWasRead` false
/// around it (the loop keeps it true otherwise), and whether the body's last access is a read: what
/// ALE's per-access updates leave in `myLastAccessWasRead` after the instruction. Checked: only JSR and
/// BRK write more than once, and in a case that writes no read comes after its last write but in those
/// two, whose reads after their pushes run unconditionally.
fn writes(body: &str, first: u8) -> Result<(String, bool), String> {
    let calls = |name: &str| -> Vec<usize> {
        body.match_indices(name)
            .filter(|(at, _)| {
                body[..*at].chars().next_back().map_or(true, |c| !(c.is_ascii_alphanumeric() || c == '_'))
            })
            .map(|(at, _)| at)
            .collect()
    };
    let (pokes, peeks) = (calls("poke("), calls("peek("));
    let expected = WRITES_TWICE.iter().find(|(opcode, _)| *opcode == first).map(|(_, n)| *n);
    match expected {
        Some(n) if pokes.len() != n => {
            return Err(format!("opcode {first:#04x}'s case writes {} times, expected {n}", pokes.len()))
        }
        None if pokes.len() > 1 => return Err(format!("opcode {first:#04x}'s case writes {} times", pokes.len())),
        _ => {}
    }
    let last_poke = pokes.last().copied();
    let last_peek = peeks.last().copied();
    let last_was_read = match (last_poke, last_peek) {
        (None, _) => true,
        (Some(poke), Some(peek)) if peek > poke => {
            if expected.is_none() {
                return Err(format!("opcode {first:#04x}'s case reads after it writes"));
            }
            true
        }
        (Some(_), _) => false,
    };
    let mut rewritten = String::with_capacity(body.len() + 64);
    let mut from = 0;
    for &at in pokes.iter().skip(1) {
        rewritten.push_str(&body[from..at]);
        rewritten.push_str("pokeAfterWrite(");
        from = at + "poke(".len();
    }
    rewritten.push_str(&body[from..]);
    Ok((rewritten, last_was_read))
}

/// A case's labels: one for a case of one opcode; for a case of several, one per opcode that stores
/// the instruction register and jumps to the shared body's own label.
fn write_labels(cases: &mut String, labels: &[u8]) {
    match labels {
        [opcode] => writeln!(cases, "torchwm_op_{opcode:02x}:"),
        _ => {
            let first = labels[0];
            for opcode in labels {
                writeln!(cases, "torchwm_op_{opcode:02x}: IR = {opcode:#04x}; goto torchwm_body_{first:02x};")
                    .expect("writing to a String");
            }
            writeln!(cases, "torchwm_body_{first:02x}:")
        }
    }
    .expect("writing to a String");
}

/// `Some(Some(opcode))` for a line `case 0xNN:`, `Some(None)` for any other line that starts with
/// `case`, `None` otherwise.
fn case_label(line: &str) -> Option<Option<u8>> {
    let rest = line.trim_start().strip_prefix("case")?;
    let hex = rest.strip_prefix(" 0x").and_then(|r| r.strip_suffix(':')).filter(|h| h.len() == 2);
    Some(hex.and_then(|h| u8::from_str_radix(h, 16).ok()))
}

/// The first control-flow keyword on `line` that could leave or re-enter a case other than by its
/// closing `break;` (as a whole word, outside comments).
fn control_word(line: &str) -> Option<&'static str> {
    const WORDS: [&str; 9] = ["break", "case", "default", "goto", "return", "continue", "switch", "for", "while"];
    let code = line.split("//").next().unwrap_or_default();
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    WORDS.into_iter().find(|word| {
        code.match_indices(word).any(|(at, _)| {
            let before = code[..at].chars().next_back().map_or(true, |c| !is_ident(c));
            let after = code[at + word.len()..].chars().next().map_or(true, |c| !is_ident(c));
            before && after
        })
    })
}

/// Writes the rewritten cases and the table of ALE's `ale/emucore/M6502Low.ins` into `generated/torchwm/`
/// (`M6502Low_threaded.ins`, `M6502Low_dispatch.inc`), which src/ffi/cpu/execute.inc includes.
pub fn write(generated: &std::path::Path, ale_src: &std::path::Path) -> Result<(), String> {
    let original = ale_src.join("ale/emucore/M6502Low.ins");
    let ins = std::fs::read_to_string(&original).map_err(|e| format!("cannot read {}: {e}", original.display()))?;
    let threaded = rewrite(&ins).map_err(|e| {
        format!("{} is not the source build/threaded_dispatch.rs was written for: {e}", original.display())
    })?;
    // ALE 0.12.1's M6502Low.ins: 220 cases for 244 opcodes.
    if threaded.cases_and_opcodes != (220, 244) {
        let (cases, opcodes) = threaded.cases_and_opcodes;
        return Err(format!("{} has {cases} cases for {opcodes} opcodes, expected 220 for 244", original.display()));
    }
    let dir = generated.join("torchwm");
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("M6502Low_threaded.ins"), threaded.cases))
        .and_then(|()| std::fs::write(dir.join("M6502Low_dispatch.inc"), threaded.table))
        .map_err(|e| format!("cannot write {}: {e}", dir.display()))
}
