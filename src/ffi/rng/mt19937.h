// std::mt19937 with libstdc++'s state layout and text format, for ALE's Random (build/ale_edits.rs puts it
// in place of ALE's `typedef std::mt19937 randgen_t;` in Random.cxx).
//
// ALE saves its RNG by streaming the engine (`oss << m_randgen`), in the C++ library's own text format:
// libstdc++ writes the 624 state words and then the index, libc++ the words rotated to its index and no
// index. ale_py's wheels link libstdc++; torchwm's portable wheels are built by zig's clang against libc++,
// whose saved states therefore differed from ale_py's. The draws themselves are fixed by the standard. This
// engine keeps libstdc++'s representation (the whole block twisted at once, the index beside it), so
// states are ale_py's bytes whichever library the build links.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <ostream>

namespace torchwm {

class Mt19937 {
 public:
  static constexpr uint32_t max() { return 0xffffffffu; }

  Mt19937() { seed(5489u); }  // std::mt19937's default seed

  void seed(uint32_t value) {
    words_[0] = value;
    for (size_t i = 1; i < kN; ++i) {
      words_[i] = 1812433253u * (words_[i - 1] ^ (words_[i - 1] >> 30)) + static_cast<uint32_t>(i);
    }
    index_ = kN;
  }

  uint32_t operator()() {
    if (index_ >= kN) twist();
    uint32_t z = words_[index_++];
    z ^= z >> 11;
    z ^= (z << 7) & 0x9d2c5680u;
    z ^= (z << 15) & 0xefc60000u;
    z ^= z >> 18;
    return z;
  }

  // libstdc++'s operator<<: each word in decimal followed by a space, then the index.
  friend std::ostream& operator<<(std::ostream& os, const Mt19937& engine) {
    const std::ios_base::fmtflags flags = os.flags();
    const char fill = os.fill();
    os.flags(std::ios_base::dec | std::ios_base::fixed | std::ios_base::left);
    os.fill(' ');
    for (size_t i = 0; i < kN; ++i) os << engine.words_[i] << ' ';
    os << engine.index_;
    os.flags(flags);
    os.fill(fill);
    return os;
  }

  // libstdc++'s operator>>. An index past the block only makes the next draw twist, as there.
  friend std::istream& operator>>(std::istream& is, Mt19937& engine) {
    const std::ios_base::fmtflags flags = is.flags();
    is.flags(std::ios_base::dec | std::ios_base::skipws);
    for (size_t i = 0; i < kN; ++i) is >> engine.words_[i];
    is >> engine.index_;
    is.flags(flags);
    return is;
  }

 private:
  static constexpr size_t kN = 624;
  static constexpr size_t kM = 397;

  // The whole block at once, in place, as libstdc++'s _M_gen_rand.
  void twist() {
    for (size_t i = 0; i < kN; ++i) {
      const uint32_t y = (words_[i] & 0x80000000u) | (words_[(i + 1) % kN] & 0x7fffffffu);
      words_[i] = words_[(i + kM) % kN] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
    }
    index_ = 0;
  }

  uint32_t words_[kN];
  size_t index_;
};

}  // namespace torchwm
