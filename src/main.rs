fn main() -> std::process::ExitCode {
    meshjob::main()
}
