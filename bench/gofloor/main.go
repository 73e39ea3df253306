// Command gofloor does nothing: make bench's start-up section times it beside
// strata and git, built as strata is (static, CGO_ENABLED=0), to show what
// part of strata's start-up any Go program pays (the runtime's own start:
// CPU feature probing, the cgroup CPU limit, heap and threads) and what part
// is strata's (its packages' initialisation, its size, its work).
package main

func main() {}
