"""autograph.source"""
