// BurstMode: how a burst's copies leave the harness, one enum for the
// scenario model (`mode:` of a burst step) and the injectors' sender.
//  kLastByte: every copy written but its last byte, then all last bytes at
//             once (injectors/burst.h, "last-byte sync").
//  kThreads:  one thread per copy, each sending its whole request.
#pragma once

namespace idemproof {

enum class BurstMode { kLastByte, kThreads };

}  // namespace idemproof
