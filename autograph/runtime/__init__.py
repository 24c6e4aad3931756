"""autograph.runtime"""
