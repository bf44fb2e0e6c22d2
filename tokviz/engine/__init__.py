"""tokviz.engine"""
