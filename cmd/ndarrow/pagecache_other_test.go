//go:build !linux

package main

// limitAddressSpaceForMain: address-space limits are applied on Linux only.
func limitAddressSpaceForMain() {}
