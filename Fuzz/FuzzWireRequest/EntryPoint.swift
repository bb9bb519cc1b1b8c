import FuzzSupport

/// libFuzzer's entry point (`make fuzz` links libFuzzer, which calls it).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzWireRequest(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    WireRequestFuzzer.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
/// Without libFuzzer: replays the seed corpus, or the files given (`FuzzReplay`).
@main
enum FuzzWireRequestReplay {
    static func main() {
        FuzzReplay.main(target: "FuzzWireRequest", body: WireRequestFuzzer.run)
    }
}
#endif
