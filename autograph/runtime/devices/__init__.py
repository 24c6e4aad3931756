"""autograph.runtime.devices"""
