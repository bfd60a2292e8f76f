//! The safe emulator: errors instead of crashes, and determinism.
mod common;

use torchwm::{Ale, Error};

#[test]
fn missing_rom_is_an_error() {
    let mut ale = Ale::new().unwrap();
    let err = ale.load_rom(std::path::Path::new("/nonexistent/breakout.bin")).unwrap_err();
    assert!(matches!(err, Error::RomNotFound(_)), "{err:?}");
}

#[test]
fn file_that_is_not_a_rom_is_an_error() {
    let path = std::env::temp_dir().join(format!("torchwm-not-a-rom-{}.bin", std::process::id()));
    std::fs::write(&path, b"definitely not an Atari cartridge").unwrap();
    let mut ale = Ale::new().unwrap();
    let err = ale.load_rom(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(err, Error::UnsupportedRom(_)), "{err:?}");
}

#[test]
fn calls_before_a_rom_is_loaded_are_errors() {
    let mut ale = Ale::new().unwrap();
    assert!(matches!(ale.act(0, 1.0), Err(Error::Ale(m)) if m.contains("no ROM")));
    assert!(ale.screen_grayscale().is_err());
    assert!(ale.lives().is_err());
}

#[test]
fn unknown_setting_is_an_error() {
    let mut ale = Ale::new().unwrap();
    let err = ale.set_int("no_such_setting", 3).unwrap_err();
    assert!(matches!(&err, Error::Ale(m) if m.contains("no_such_setting")), "{err:?}");
    // The emulator is still usable afterwards.
    ale.set_int("random_seed", 1).unwrap();
    assert_eq!(ale.get_int("random_seed").unwrap(), 1);
}

#[test]
fn bad_actions_are_rejected_and_the_emulator_keeps_working() {
    let rom = common::rom("breakout");
    let mut ale = Ale::new().unwrap();
    ale.load_rom(&rom).unwrap();
    for bad in [-1, 18, 1000] {
        assert!(matches!(ale.act(bad, 1.0), Err(Error::InvalidArgument(_))), "action {bad}");
    }
    assert!(matches!(ale.act(0, f32::NAN), Err(Error::InvalidArgument(_))));
    ale.act(1, 1.0).unwrap();
    assert_eq!(ale.frame_number().unwrap(), 1);
}

#[test]
fn same_seed_same_frames_and_state_round_trip() {
    let rom = common::rom("pong");
    let run = |seed: i32| {
        let mut ale = Ale::new().unwrap();
        ale.set_int("random_seed", seed).unwrap();
        ale.set_float("repeat_action_probability", 0.25).unwrap();
        ale.load_rom(&rom).unwrap();
        let actions = ale.minimal_action_set().unwrap();
        let mut screens = Vec::new();
        for t in 0..300 {
            ale.act(actions[t % actions.len()], 1.0).unwrap();
            screens.push(ale.screen_rgb().unwrap());
        }
        screens
    };
    assert_eq!(run(5), run(5));

    let mut ale = Ale::new().unwrap();
    ale.load_rom(&rom).unwrap();
    for _ in 0..50 {
        ale.act(0, 1.0).unwrap();
    }
    let state = ale.clone_state(false).unwrap();
    let ram = ale.ram().unwrap();
    for _ in 0..50 {
        ale.act(3, 1.0).unwrap();
    }
    ale.restore_state(&state).unwrap();
    assert_eq!(ale.ram().unwrap(), ram);
    assert_eq!(ale.ram().unwrap().len(), 128);
}

#[test]
fn the_screen_is_the_last_frame_across_restores() {
    // ALE copies each finished frame into its screen, and a restore leaves that copy alone; torchwm's
    // build copies when the screen is read, so a read after a restore must still give the frame
    // emulated before it, and the next frame must be the restored emulator's.
    let rom = common::rom("breakout");
    let start = |frames: usize| {
        let mut ale = Ale::new().unwrap();
        ale.load_rom(&rom).unwrap();
        for t in 0..frames {
            ale.act(if t < 30 { 1 } else { 3 }, 1.0).unwrap();
        }
        ale
    };
    let mut ale = start(30);
    let saved = ale.save_emulator().unwrap();
    let state = ale.clone_state(true).unwrap();
    for _ in 0..40 {
        ale.act(3, 1.0).unwrap();
    }
    ale.restore_emulator(&saved).unwrap();
    let after_restore = ale.screen_rgb().unwrap();
    let last_frame = start(70).screen_rgb().unwrap();
    assert!(after_restore == last_frame, "the screen after restore_emulator");
    assert!(last_frame != start(30).screen_rgb().unwrap(), "the paddle moved in the 40 frames");

    let mut fresh = start(30);
    fresh.act(0, 1.0).unwrap();
    ale.act(0, 1.0).unwrap();
    assert!(ale.screen_rgb().unwrap() == fresh.screen_rgb().unwrap(), "the frame after restore_emulator");

    for _ in 0..40 {
        ale.act(3, 1.0).unwrap();
    }
    ale.restore_state(&state).unwrap();
    let mut again = start(30);
    again.act(0, 1.0).unwrap();
    for _ in 0..40 {
        again.act(3, 1.0).unwrap();
    }
    assert!(ale.screen_rgb().unwrap() == again.screen_rgb().unwrap(), "the screen after restore_state");
}
