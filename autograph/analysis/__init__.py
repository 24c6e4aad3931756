"""autograph.analysis"""
