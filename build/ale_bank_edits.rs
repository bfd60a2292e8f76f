//! Edits to ALE's banked cartridges (`build/ale_edits.rs` says how edits work): each one's bank()
//! maps its ROM pages with one call of System::torchwmMapReadOnlyPages
//! (src/ffi/cpu/system_read_only_pages.inc) instead of a loop of setPageAccess calls, one a page.

use crate::ale_edits::{Edit, FilePatch};

/// The edits of one cartridge whose bank() maps the pages from `$first` up to (not including) the
/// page of its first hot spot `$hotspot` (ALE's loop bounds, in its spelling) to its image at
/// `offset`, the bank's first byte.
macro_rules! bank_patch {
    ($cart:literal, $first:literal, $hotspot:literal) => {
        FilePatch {
            file: concat!("ale/emucore/Cart", $cart, ".cxx"),
            // Both anchors occur once in each of these files, in bank().
            scope: None,
            edits: &[
                Edit::InsertBefore {
                    anchor: "  // Setup the page access methods for the current bank\n",
                    text: concat!(
                        "  mySystem->torchwmMapReadOnlyPages(",
                        $first,
                        " >> shift, (",
                        $hotspot,
                        " & ~mask) >> shift, this,\n      &myImage[offset + (",
                        $first,
                        " & 0x0FFF)]);\n#if 0  // ALE's loop, as torchwmMapReadOnlyPages above\n",
                    ),
                },
                Edit::InsertAfter {
                    anchor: "    mySystem->setPageAccess(address >> shift, access);\n  }\n",
                    text: "#endif\n",
                },
            ],
        }
    };
}

pub const PATCHES: [FilePatch; 9] = [
    FilePatch {
        file: "ale/emucore/System.hxx",
        scope: None,
        edits: &[Edit::InsertAfter {
            anchor: "    void setPageAccess(uint16_t page, const PageAccess& access);\n",
            text: "#include \"cpu/system_read_only_pages.inc\"\n",
        }],
    },
    FilePatch {
        file: "ale/emucore/System.cxx",
        scope: None,
        edits: &[Edit::InsertBefore {
            anchor: "void System::setPageAccess(uint16_t page, const PageAccess& access)\n",
            text: "#include \"cpu/system_read_only_pages_def.inc\"\n",
        }],
    },
    bank_patch!("F8", "0x1000", "0x1FF8U"),
    bank_patch!("F6", "0x1000", "0x1FF6U"),
    bank_patch!("F4", "0x1000", "0x1FF4U"),
    bank_patch!("F8SC", "0x1100", "0x1FF8U"),
    bank_patch!("F6SC", "0x1100", "0x1FF6U"),
    bank_patch!("F4SC", "0x1100", "0x1FF4U"),
    bank_patch!("FASC", "0x1200", "0x1FF8U"),
];
