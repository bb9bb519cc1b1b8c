import FuzzSupport

/// libFuzzer's entry point (`make fuzz` links libFuzzer, which calls it).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzPredicateParser(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    PredicateParserFuzzer.run(Array(UnsafeBufferPointer(start: data, count: size)))
    return 0
}

#if !FUZZING
/// Without libFuzzer: replays the seed corpus, or the files given (`FuzzReplay`).
@main
enum FuzzPredicateParserReplay {
    static func main() {
        FuzzReplay.main(target: "FuzzPredicateParser", body: PredicateParserFuzzer.run)
    }
}
#endif
